package io.conveyor.archive;

import io.conveyor.database.ArchiveStore;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.AuditEntry;
import io.conveyor.redis.AdminEvents;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The archive leader of partition 0 moves the audit entries waiting on auditX (from every node's HTTP and event-bus
 * API and from the command line; README, Audit log) into the archive's audit table, a batch at a time, and drops
 * them from auditX once written. A failed write leaves them there and tries again after a pause doubling from 1 s to
 * 30 s. A leader that dies between the write and the drop leaves them to be written again (at least once). Owned by
 * that ArchiveVerticle and used on its context only.
 */
final class AuditDrain {
  private static final Logger log = LoggerFactory.getLogger(AuditDrain.class);
  static final int BATCH = 500;
  static final long MAX_PAUSE_MS = 30_000;
  private final StoreContext redis;
  private final ArchiveStore archive;
  private final NodeMetrics metrics;
  private boolean draining;
  private long pauseMs;
  private long nextAt;

  AuditDrain(StoreContext redis, ArchiveStore archive, NodeMetrics metrics) {
    this.redis = redis;
    this.archive = archive;
    this.metrics = metrics;
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

  /** Batch after batch until auditX holds less than one. */
  private Future<Void> drain() {
    return AdminEvents.waiting(redis, BATCH).compose(batch -> {
      if (batch.isEmpty()) {
        return Future.succeededFuture();
      }
      List<AuditEntry> entries = batch.stream().map(w -> AuditEntry.fromJson(new JsonObject(w.json()))).toList();
      return archive.appendAudit(entries)
          .onFailure(e -> metrics.audit("retried", entries.size()))
          .compose(v -> AdminEvents.written(redis, batch))
          .compose(v -> {
            metrics.audit("stored", entries.size());
            return batch.size() < BATCH ? Future.<Void>succeededFuture() : drain();
          });
    });
  }
}
