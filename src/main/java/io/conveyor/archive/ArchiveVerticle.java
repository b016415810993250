package io.conveyor.archive;

import io.conveyor.database.ArchiveStore;
import io.conveyor.config.Config;
import io.conveyor.lease.LeaderLoop;
import io.conveyor.lease.RoundFailures;
import io.conveyor.model.Durations;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.redis.ArchiveHandoff;
import io.conveyor.redis.ArchiveHandoff.ToArchive;
import io.conveyor.redis.QuarantineStore;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves finished transactions from Redis to the archive, on the leader of the archive role only
 * (toArchiveLock1/2). A tick is one archive.lua call: it renews the lease, confirms the batches written
 * since the last tick (only then are they deleted from Redis), and takes the next due batch. Fetching and
 * writing overlap: while one batch is being written (one upsert), the next is fetched, so Redis and the
 * database work at the same time. A batch the database refuses for a row's own fault is split (BatchWriter):
 * the rows that fail alone are quarantined in Redis (archive-quarantine.lua), the rest confirmed. A write that
 * fails otherwise (an outage) confirms nothing: the leader writes the same batch again after a backoff,
 * renewing its lease meanwhile. With nothing due, the next tick comes after
 * archive.interval; a conveyor.node.died (the dead node may have led) ticks at once. The ticking, the renewal
 * and the hand-on are the LeaderLoop's; this class keeps the archive's own work.
 */
public final class ArchiveVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(ArchiveVerticle.class);
  /** Failed writes in a row after which a leader hands the role on. */
  private static final int HAND_ON_AFTER = 3;
  private final RedisAccess redis;
  private final ArchiveStore archive;
  private final Config.Archive settings;
  private final String nodeId;
  private final NodeMetrics metrics;
  private final int partition;
  private final LeaderLoop.Seat seat;
  /** This partition went to another node: once nothing waits here, the lease is handed on. */
  private boolean letGo;
  private StoreContext redisContext;
  private ArchiveHandoff store;
  private QuarantineStore quarantined;
  private BatchWriter writer;
  private Retention retention;
  private AuditDrain audit;
  private LeaderLoop loop;
  /** Written, not yet confirmed. */
  private List<ToArchive> written = new ArrayList<>();
  /** Fetched (or failed to write), waiting for the writer. */
  private List<ToArchive> pending;
  private boolean writing;
  /** An archive.lua call is under way. */
  private boolean ticking;
  private int failures;
  private RoundFailures redisFailures;
  private long retryAt;
  /** Until then (ms, the clock) this node takes no archive lease: it stood down after failed writes. */
  private long standDownUntil;
  /** When the archive began to refuse writes here (ms, the clock), and how many have failed since; 0 if not. */
  private long outageSince;
  private int outageFailures;
  private boolean stoodDown;
  /** Stand-downs in a row, with no successful write between (each lasts twice the one before). */
  private int standDowns;
  private boolean stopping;
  private Promise<Void> idle;

  private Duration auditRetention = Duration.ZERO;

  /** As below, pruning the audit log by audit.retention as well (Retention). */
  public ArchiveVerticle(RedisAccess redis, ArchiveStore archive, Config.Archive settings, Duration auditRetention,
                         NodeMetrics metrics, LeaderLoop.Seat seat) {
    this(redis, archive, settings, metrics, seat);
    this.auditRetention = auditRetention;
  }

  /**
   * The archive role of one partition (the seat's). With several, each node runs one of these per partition,
   * and only those the assignment gives it ask for their lease; the others send nothing.
   */
  public ArchiveVerticle(RedisAccess redis, ArchiveStore archive, Config.Archive settings, NodeMetrics metrics,
                         LeaderLoop.Seat seat) {
    this.seat = seat;
    this.partition = seat.partition();
    this.redis = redis;
    this.archive = archive;
    this.settings = settings;
    this.nodeId = seat.nodeId();
    this.metrics = metrics;
  }

  @Override
  public Future<?> start() {
    redisContext = redis.open(vertx);
    store = new ArchiveHandoff(redisContext);
    quarantined = new QuarantineStore(redisContext);
    writer = new BatchWriter(archive, settings.timeout());
    retention = new Retention(archive, settings.retention(), auditRetention, seat.ticker());
    audit = new AuditDrain(redisContext, archive, metrics, () -> partition == 0 && loop.leads() && !stopping);
    // a round renews the lease: the loop runs one at least every third of it, even while a long write or a
    // backoff after failed writes holds the other rounds back
    redisFailures = new RoundFailures(log, "archive (partition " + partition + ")");
    loop = new LeaderLoop(vertx, redisContext, seat, "archiving to " + archive.describe()
        + (redis.keys().partitions() > 1 ? " (partition " + partition + ")" : ""), settings.lease(), this::round);
    loop.tick();
    return loop.wakeOnNodeDied();
  }

  /**
   * One archive.lua call (the loop never runs two at once); answers when the next is due (LeaderLoop.NO_TIMER:
   * the write under way ticks when it ends).
   */
  private Future<Long> round() {
    boolean wanted = loop.wanted();
    if (!wanted && written.isEmpty() && pending == null && !writing && !loop.leads()) {
      // another node's partition, and nothing of it here: nothing to ask Redis
      return Future.succeededFuture(settings.interval().toMillis());
    }
    letGo = !wanted;
    ticking = true;
    List<ToArchive> confirming = written;
    written = new ArrayList<>();
    // fetch only when the writer has nothing waiting and the archive takes writes: at most one batch
    // written and one fetched; while writes fail, the leader only renews its lease and retries what it has
    int max = stopping || letGo || pending != null || failures > 0 || millis() < standDownUntil ? 0
        : settings.batchSize();
    long asked = loop.asking();
    return store.archiveBatch(partition, nodeId, confirming, max, settings.lease(), settings.grace(), hold())
        .<Long>transform(ar -> {
          ticking = false;
          if (ar.failed()) {
            // the confirmation may not have landed: it goes again with the next tick (it is idempotent)
            confirming.addAll(written);
            written = confirming;
            redisFailures.failed(ar.cause());
            checkIdle();
            return Future.succeededFuture(backoff(Math.max(1, failures)));
          }
          redisFailures.worked();
          loop.update(ar.result().leader(), asked);
          retention.pass(millis(), partition == 0 && loop.leads() && !stopping);
          audit.pass(partition == 0 && loop.leads() && !stopping);
          // an answer that came after the lease it renewed had run out (by this node's clock) is not acted on:
          // another node may lead by now. What came, and what waits here, is given back to be due at once
          if (!loop.leads()) {
            if (!ar.result().batch().isEmpty()) {
              pending = merge(pending, ar.result().batch());
            }
            release();
          } else if (!ar.result().batch().isEmpty()) {
            pending = merge(pending, ar.result().batch());
          }
          if (letGo && loop.leads() && pending == null && !writing && written.isEmpty()) {
            // the partition went to another node and nothing of it waits here: hand it on now, not after a lease
            loop.letGo();
          }
          boolean couldNotFetch = max == 0 && pending != null;
          if (!stopping) {
            startWrite();
          }
          checkIdle();
          if (writing && pending == null && couldNotFetch && failures == 0) {
            // what waited is being written now: fetch the next batch meanwhile (once)
            return Future.succeededFuture(0L);
          } else if (!writing) {
            return Future.succeededFuture(pending != null ? Math.max(0, retryAt - millis())
                : settings.interval().toMillis());
          }
          return Future.succeededFuture(LeaderLoop.NO_TIMER); // the write in progress ticks when it ends
        });
  }

  /** Starts writing the waiting batch, unless a write is under way or a failed one must wait its backoff. */
  private void startWrite() {
    if (writing || pending == null || millis() < retryAt) {
      return;
    }
    List<ToArchive> batch = pending;
    pending = null;
    writing = true;
    long began = seat.ticker().nanos();
    writer.write(batch).onComplete(ar -> {
      writing = false;
      if (ar.succeeded()) {
        metrics.archiveBatch(ar.result().written().size(), seat.ticker().nanos() - began);
        quarantine(ar.result().refused());
        if (outageSince > 0) {
          log.info("the archive ({}) accepts writes again after {} failed attempts over {}", archive.describe(),
              outageFailures, Durations.format(java.time.Duration.ofMillis(millis() - outageSince)));
          outageSince = 0;
          outageFailures = 0;
          stoodDown = false;
        }
        failures = 0;
        standDowns = 0;
        written.addAll(ar.result().written());
      } else {
        failures++;
        long wait = backoff(failures);
        retryAt = millis() + wait;
        outageFailures++;
        if (outageSince == 0) {
          // one line when an outage begins and one when it ends (with the count); the attempts between at DEBUG
          outageSince = millis();
          log.warn("archive write of {} transactions to {} failed: {}; retrying with backoff (Redis keeps every "
              + "state meanwhile)", batch.size(), archive.describe(), ar.cause().getMessage());
        } else {
          log.debug("archive write of {} transactions failed (attempt {}), retrying in {}: {}", batch.size(),
              failures, Durations.format(java.time.Duration.ofMillis(wait)), ar.cause().getMessage());
        }
        // a batch fetched meanwhile goes with this one: write both again, this one first
        pending = merge(batch, pending);
        if (!loop.leads()) {
          // the lease ran out meanwhile: what this node held goes back to be due at once, for the next leader
          release();
          failures = 0;
        } else if (failures >= HAND_ON_AFTER) {
          standDown();
        }
      }
      if (stopping) {
        checkIdle();
      } else if (ar.succeeded()) {
        loop.tick();
      } else {
        loop.next(backoff(failures));
      }
    });
  }

  /** Sets aside what the database refused alone (BatchWriter): kept in Redis for an operator, out of the way. */
  private void quarantine(List<QuarantineStore.Refused> refused) {
    if (refused.isEmpty()) {
      return;
    }
    refused.forEach(x -> log.warn("archive: {} set aside, the database refuses it alone: {} (it stays in Redis; "
        + "list, retry or drop it: GET /api/v1/admin/archive/quarantine, conveyor archive-quarantine)",
        x.tx().txId(), x.message()));
    quarantined.setAside(partition, nodeId, refused).onSuccess(metrics::archiveQuarantined)
        .onFailure(e -> log.warn("setting {} refused transactions aside failed on Redis: {} (they are due again "
            + "after their hold, and refused again)", refused.size(), e.getMessage()));
  }

  /**
   * Writes keep failing here: perhaps only this node cannot reach the archive (or its write hangs), so it
   * hands the lease on and takes none for a lease and its grace, giving another node the chance to lead.
   * What it held stays in Redis, due again once its hold runs out. If every node fails, the role goes round.
   */
  private void standDown() {
    if (!stoodDown) {
      stoodDown = true; // once per outage: while the archive stays down the role goes round, quietly
      log.warn("{} archive writes in a row failed on this node: handing the archive lease on for {} (longer "
          + "each time in a row), so another node may try", failures,
          Durations.format(settings.lease().plus(settings.grace())));
    }
    release();
    failures = 0;
    retryAt = 0;
    // longer each time in a row (lease + grace, doubling to 64 times that): a node that keeps failing must
    // not keep taking its partitions back from the nodes that can write
    java.time.Duration away = settings.lease().plus(settings.grace()).multipliedBy(1L << Math.min(6, standDowns++));
    standDownUntil = millis() + away.toMillis();
    loop.away(away);
    loop.letGo();
  }

  /** What waits here is given back to be due at once (see ArchiveHandoff.release); not waited for. */
  private void release() {
    if (pending == null) {
      return;
    }
    List<ToArchive> held = pending;
    pending = null;
    store.release(partition, held).onFailure(e -> log.debug("giving {} held transactions back: {} (they come back after "
        + "their hold)", held.size(), e.getMessage()));
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

  /** Doubling from archive.interval / 4, capped at archive.maxBackoff (the renewal timer keeps the lease). */
  private long backoff(int failures) {
    long base = Math.max(10, settings.interval().toMillis() / 4);
    return Math.min(settings.maxBackoff().toMillis(), base << Math.min(20, Math.max(0, failures - 1)));
  }

  /**
   * A handed-out batch stays the leader's for as long as it may wait for the write before it and its own
   * write may take (a timeout each), plus a lease.
   */
  private Duration hold() {
    return settings.timeout().multipliedBy(2).plus(settings.lease());
  }

  private long millis() {
    return redisContext.clock().millis();
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
    retention.stop();
    loop.stop();
    idle = Promise.promise();
    checkIdle();
    return idle.future()
        .compose(v -> written.isEmpty() ? Future.succeededFuture()
            : store.archiveBatch(partition, nodeId, written, 0, settings.lease(), settings.grace(), hold()))
        .compose(v -> loop.handOn())
        .onFailure(e -> log.warn("archiving stopped uncleanly (the next leader will finish): {}", e.getMessage()))
        .transform(ar -> redisContext.close());
  }
}
