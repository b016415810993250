package io.conveyor.testing;

import io.conveyor.database.ArchiveStore;
import io.conveyor.database.ArchivedTx;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An archive store that records every write it passes on (who, when, what) and can freeze: a frozen store
 * never answers a write, as a leader that hung or died mid-batch would never confirm it.
 */
public final class RecordingArchive implements ArchiveStore {
  /** One write that reached the real store: the node's name, start and end (System.nanoTime), its txIds. */
  public record Write(String node, long start, long end, List<String> txIds) {
  }

  private final ArchiveStore real;
  private final String name;
  private final List<Write> log;
  private final AtomicInteger failures = new AtomicInteger();
  private final AtomicInteger attempts = new AtomicInteger();
  private final List<Promise<Void>> held = new CopyOnWriteArrayList<>();
  private volatile boolean frozen;
  private volatile long frozenAt;

  /** Writes of several nodes go to one shared log. */
  public RecordingArchive(ArchiveStore real, String name, List<Write> log) {
    this.real = real;
    this.name = name;
    this.log = log;
  }

  /** From now on, writes hang without reaching the store. */
  public void freeze() {
    frozenAt = System.nanoTime();
    frozen = true;
  }

  /** When the first write hung (System.nanoTime), or 0. */
  public long frozenAt() {
    return held.isEmpty() ? 0 : frozenAt;
  }

  /** Writes the store refused. */
  public int failures() {
    return failures.get();
  }

  /** Writes asked for, whatever became of them (one that hangs is retried by the node after its timeout). */
  public int attempts() {
    return attempts.get();
  }

  @Override
  public Future<Void> write(List<ArchivedTx> batch) {
    attempts.incrementAndGet();
    if (frozen) {
      Promise<Void> never = Promise.promise();
      held.add(never);
      return never.future();
    }
    long start = System.nanoTime();
    return real.write(batch).onComplete(ar -> {
      if (ar.succeeded()) {
        log.add(new Write(name, start, System.nanoTime(), batch.stream().map(ArchivedTx::txId).toList()));
      } else {
        failures.incrementAndGet();
      }
    });
  }

  @Override
  public Future<Void> open() {
    return real.open();
  }

  @Override
  public Future<Boolean> updateWebhook(String txId, io.vertx.core.json.JsonObject webhook) {
    return real.updateWebhook(txId, webhook);
  }

  @Override
  public Future<ArchivedTx> find(String txId) {
    return real.find(txId);
  }

  @Override
  public Future<ArchivedTx> findByExternalId(String owner, String externalId) {
    return real.findByExternalId(owner, externalId);
  }

  @Override
  public Future<Integer> deleteCompletedBefore(long before, int limit) {
    return real.deleteCompletedBefore(before, limit);
  }

  @Override
  public Future<Void> appendAudit(java.util.List<io.conveyor.model.AuditEntry> entries,
                                  java.util.List<String> streamIds) {
    return real.appendAudit(entries, streamIds);
  }

  @Override
  public Future<java.util.List<io.conveyor.model.AuditEntry>> audit(io.conveyor.database.AuditQuery q) {
    return real.audit(q);
  }

  @Override
  public Future<Integer> pruneAuditBefore(long before, int limit) {
    return real.pruneAuditBefore(before, limit);
  }

  @Override
  public Future<Found> search(io.conveyor.database.ArchiveQuery q) {
    return real.search(q);
  }

  @Override
  public Future<List<String>> ended(String type, String status, long from, long to, int limit) {
    return real.ended(type, status, from, to, limit);
  }

  /** Fails the writes it held, so the node can stop. */
  public void release() {
    frozen = false;
    held.forEach(p -> p.tryFail("released"));
  }

  @Override
  public Future<Void> close() {
    return real.close();
  }

  @Override
  public String describe() {
    return real.describe();
  }
}
