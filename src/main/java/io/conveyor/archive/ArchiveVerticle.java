package io.conveyor.archive;

import io.conveyor.Node;
import io.conveyor.config.Config;
import io.conveyor.config.Durations;
import io.conveyor.redis.RedisLink;
import io.conveyor.redis.TxStore;
import io.conveyor.redis.TxStore.ToArchive;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves finished transactions from Redis to the archive, on the leader of the archive role only
 * (toArchiveLock1/2). A tick is one archive.lua call: it renews the lease, confirms the batches written
 * since the last tick (only then are they deleted from Redis), and takes the next due batch. Fetching and
 * writing overlap: while one batch is being written (one upsert), the next is fetched, so Redis and the
 * database work at the same time. A failed write confirms nothing: the leader writes the same batch again
 * after a backoff, renewing its lease meanwhile. With nothing due, the next tick comes after
 * archive.interval.
 */
public final class ArchiveVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(ArchiveVerticle.class);
  private final Node node;
  private final Config.Archive settings;
  private RedisLink link;
  private TxStore store;
  /** Written, not yet confirmed. */
  private List<ToArchive> written = new ArrayList<>();
  /** Fetched (or failed to write), waiting for the writer. */
  private List<ToArchive> pending;
  private boolean writing;
  private boolean ticking;
  private boolean tickAgain;
  private boolean leader;
  private int failures;
  private long retryAt;
  private long timer = -1;
  private boolean stopping;
  private Promise<Void> idle;

  public ArchiveVerticle(Node node) {
    this.node = node;
    this.settings = node.config().archive();
  }

  @Override
  public Future<?> start() {
    link = node.link(vertx);
    store = new TxStore(link, node.keys(), node.scripts(), node.clock());
    if (settings.timeout().compareTo(settings.lease()) >= 0) {
      log.warn("archive.timeout ({}) is not shorter than archive.lease ({}): a leader stuck on a write may lose "
          + "its lease meanwhile, and two nodes may then write the same batch", Durations.format(settings.timeout()),
          Durations.format(settings.lease()));
    }
    tick();
    return Future.succeededFuture();
  }

  /** One archive.lua call; never two at once (a tick asked for meanwhile runs right after). */
  private void tick() {
    if (ticking) {
      tickAgain = true;
      return;
    }
    vertx.cancelTimer(timer);
    ticking = true;
    List<ToArchive> confirming = written;
    written = new ArrayList<>();
    // fetch only when the writer has nothing waiting and the archive takes writes: at most one batch
    // written and one fetched; while writes fail, the leader only renews its lease and retries what it has
    int max = stopping || pending != null || failures > 0 ? 0 : settings.batchSize();
    store.archiveBatch(node.nodeId(), confirming, max, settings.lease(), settings.grace()).onComplete(ar -> {
      ticking = false;
      if (ar.failed()) {
        // the confirmation may not have landed: it goes again with the next tick (it is idempotent)
        confirming.addAll(written);
        written = confirming;
        log.warn("archive round failed on Redis: {}", ar.cause().getMessage());
        next(backoff(Math.max(1, failures)));
        checkIdle();
        return;
      }
      leadership(ar.result().leader());
      if (!ar.result().batch().isEmpty()) {
        pending = merge(pending, ar.result().batch());
      }
      if (!stopping) {
        startWrite();
      }
      if (tickAgain) {
        tickAgain = false;
        tick();
      } else if (writing && pending == null && !stopping) {
        tick(); // fetch the next batch while this one is written
      } else if (!writing) {
        next(pending != null ? Math.max(0, retryAt - System.currentTimeMillis()) : settings.interval().toMillis());
      }
      // else: the write in progress ticks when it ends
      checkIdle();
    });
  }

  /** Starts writing the waiting batch, unless a write is under way or a failed one must wait its backoff. */
  private void startWrite() {
    if (writing || pending == null || System.currentTimeMillis() < retryAt) {
      return;
    }
    List<ToArchive> batch = pending;
    pending = null;
    writing = true;
    List<ArchivedTx> rows = new ArrayList<>(batch.size());
    List<ToArchive> readable = new ArrayList<>(batch.size());
    for (ToArchive t : batch) {
      try {
        rows.add(ArchivedTx.fromState(t.txId(), t.fields()));
        readable.add(t);
      } catch (RuntimeException e) {
        // not confirmed, so it stays in Redis and comes back after a lease, logged again
        log.error("cannot archive {}: its state is unreadable ({})", t.txId(), e.toString());
      }
    }
    long began = System.nanoTime();
    node.archive().write(rows).timeout(settings.timeout().toMillis(), TimeUnit.MILLISECONDS).onComplete(ar -> {
      writing = false;
      if (ar.succeeded()) {
        node.metrics().archiveBatch(rows.size(), System.nanoTime() - began);
        if (failures > 0) {
          log.info("the archive ({}) accepts writes again after {} failed attempts", node.archive().describe(),
              failures);
        }
        failures = 0;
        written.addAll(readable);
      } else {
        failures++;
        long wait = backoff(failures);
        retryAt = System.currentTimeMillis() + wait;
        if (failures == 1 || failures % 10 == 0) {
          log.warn("archive write of {} transactions to {} failed (attempt {}), retrying in {}: {}", rows.size(),
              node.archive().describe(), failures, Durations.format(java.time.Duration.ofMillis(wait)),
              ar.cause().getMessage());
        }
        // a batch fetched meanwhile goes with this one: write both again, this one first
        pending = merge(batch, pending);
      }
      if (stopping) {
        checkIdle();
      } else if (ar.succeeded()) {
        tick();
      } else {
        next(backoff(failures));
      }
    });
  }

  /**
   * Two batches as one, each txId once (the later copy wins: its stamp is the newer), so one upsert never
   * names a row twice.
   */
  private static List<ToArchive> merge(List<ToArchive> first, List<ToArchive> then) {
    java.util.LinkedHashMap<String, ToArchive> byId = new java.util.LinkedHashMap<>();
    for (List<ToArchive> part : java.util.Arrays.asList(first, then)) {
      if (part != null) {
        part.forEach(t -> byId.put(t.txId(), t));
      }
    }
    return new ArrayList<>(byId.values());
  }

  /** Doubling from archive.interval / 4, capped at archive.maxBackoff and at a third of the lease. */
  private long backoff(int failures) {
    long base = Math.max(10, settings.interval().toMillis() / 4);
    long cap = Math.min(settings.maxBackoff().toMillis(), settings.lease().toMillis() / 3);
    return Math.min(cap, base << Math.min(20, failures - 1));
  }

  private void next(long millis) {
    if (stopping) {
      return;
    }
    vertx.cancelTimer(timer);
    if (millis <= 0) {
      context.runOnContext(v -> tick());
    } else {
      timer = vertx.setTimer(millis, t -> tick());
    }
  }

  private void leadership(boolean now) {
    if (now != leader) {
      leader = now;
      log.info(now ? "node {} leads archiving to {}" : "node {} no longer leads archiving ({})", node.nodeId(),
          node.archive().describe());
    }
  }

  private void checkIdle() {
    if (idle != null && !ticking && !writing) {
      idle.tryComplete();
    }
  }

  /**
   * Lets the write under way end, confirms what was written (so Redis is cleaned now, not by the next
   * leader), and gives up the lease, so another node leads at once instead of after lease + grace. A batch
   * fetched but not written stays in Redis, due again after one lease.
   */
  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(timer);
    idle = Promise.promise();
    checkIdle();
    return idle.future()
        .compose(v -> written.isEmpty() ? Future.succeededFuture()
            : store.archiveBatch(node.nodeId(), written, 0, settings.lease(), settings.grace()))
        .compose(v -> leader ? store.breakLease(TxStore.ARCHIVE_ROLE, List.of(node.nodeId()))
            : Future.succeededFuture())
        .onFailure(e -> log.warn("archiving stopped uncleanly (the next leader will finish): {}", e.getMessage()))
        .transform(ar -> link.close());
  }
}
