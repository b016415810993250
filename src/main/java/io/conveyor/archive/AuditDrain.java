package io.conveyor.archive;

import io.conveyor.database.ArchiveStore;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.AuditEntry;
import io.conveyor.redis.AdminEvents;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The archive leader of partition 0 moves the audit entries waiting on auditX (from every node's HTTP and event-bus
 * API and from the command line; README, Audit log) into the archive's audit table, a batch at a time, and drops
 * them from auditX once written. Each row carries its auditX stream id in a unique column, so an entry written again
 * (a leader that died between the write and the drop, or two leaders for a moment) is skipped, not doubled; and the
 * drain asks whether it still leads before each batch. A batch the database refuses is written one entry at a time:
 * an entry refused alone with a data error (BatchWriter.DATA_ERRORS) is set aside (logged at ERROR with its content,
 * counted as failed) so that it cannot stall the others. Anything else leaves them on auditX and tries again after a
 * pause doubling from 1 s to 30 s. Owned by that ArchiveVerticle and used on its context only.
 */
final class AuditDrain {
  private static final Logger log = LoggerFactory.getLogger(AuditDrain.class);
  static final int BATCH = 500;
  static final long MAX_PAUSE_MS = 30_000;
  private final StoreContext redis;
  private final ArchiveStore archive;
  private final NodeMetrics metrics;
  private final BooleanSupplier leads;
  private boolean draining;
  private long pauseMs;
  private long nextAt;

  /** leads: whether this node still leads partition 0's archive (asked again before each batch). */
  AuditDrain(StoreContext redis, ArchiveStore archive, NodeMetrics metrics, BooleanSupplier leads) {
    this.redis = redis;
    this.archive = archive;
    this.metrics = metrics;
    this.leads = leads;
  }

  /** Drains what waits if this node may (due) and no drain or pause after a failure is under way. */
  void pass(boolean due) {
    long now = redis.clock().millis();
    if (!due || draining || now < nextAt) {
      return;
    }
    draining = true;
    drain().onComplete(ar -> {
      draining = false;
      if (ar.succeeded()) {
        pauseMs = 0;
        return;
      }
      pauseMs = Math.min(MAX_PAUSE_MS, Math.max(1000, pauseMs * 2));
      nextAt = redis.clock().millis() + pauseMs;
      log.warn("audit log: moving entries from Redis to {} failed ({}); they wait on auditX, next try in {} ms",
          archive.describe(), ar.cause().getMessage(), pauseMs);
    });
  }

  /** Batch after batch until auditX holds less than one or this node no longer leads. */
  private Future<Void> drain() {
    if (!leads.getAsBoolean()) {
      return Future.succeededFuture();
    }
    return AdminEvents.waiting(redis, BATCH).compose(batch -> {
      if (batch.isEmpty()) {
        return Future.succeededFuture();
      }
      List<AdminEvents.Waiting> readable = batch.stream().filter(this::readable).toList();
      List<AuditEntry> entries = readable.stream().map(w -> AuditEntry.fromJson(new JsonObject(w.json()))).toList();
      List<String> ids = readable.stream().map(AdminEvents.Waiting::id).toList();
      return archive.appendAudit(entries, ids).map(0)
          .recover(e -> oneByOne(readable, 0, 0))
          .compose(setAside -> AdminEvents.written(redis, batch).map(setAside))
          .compose(setAside -> {
            metrics.audit("stored", entries.size() - setAside);
            return batch.size() < BATCH ? Future.<Void>succeededFuture() : drain();
          });
    });
  }

  /** Whether an entry on auditX reads as one; one that does not (no writer of ours makes it) is set aside. */
  private boolean readable(AdminEvents.Waiting w) {
    try {
      AuditEntry.fromJson(new JsonObject(w.json()));
      return true;
    } catch (RuntimeException e) {
      metrics.audit("failed", 1);
      log.error("audit log: entry {} on auditX is not an audit entry ({}); set aside, not stored: {}", w.id(),
          e.getMessage(), w.json());
      return false;
    }
  }

  /**
   * The batch from index i on, an entry at a time; one refused alone with a data error is set aside. Answers how many
   * were (setAside before i, plus those after).
   */
  private Future<Integer> oneByOne(List<AdminEvents.Waiting> batch, int i, int setAside) {
    if (i == batch.size()) {
      return Future.succeededFuture(setAside);
    }
    AdminEvents.Waiting w = batch.get(i);
    return Future.<Void>succeededFuture()
        .compose(v -> archive.appendAudit(List.of(AuditEntry.fromJson(new JsonObject(w.json()))), List.of(w.id())))
        .map(0)
        .recover(e -> {
          String state = BatchWriter.sqlState(e);
          if (state == null || state.length() < 2 || !BatchWriter.DATA_ERRORS.contains(state.substring(0, 2))) {
            metrics.audit("retried", batch.size() - i);
            return Future.<Integer>failedFuture(e);
          }
          metrics.audit("failed", 1);
          log.error("audit log: {} refused entry {} alone (SQLState {}: {}); set aside, not stored: {}",
              archive.describe(), w.id(), state, e.getMessage(), w.json());
          return Future.succeededFuture(1);
        })
        .compose(n -> oneByOne(batch, i + 1, setAside + n));
  }
}
