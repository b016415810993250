package io.conveyor.api;

import io.conveyor.database.ArchiveStore;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.AuditEntry;
import io.conveyor.redis.AdminEvents;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where one HTTP verticle's audit entries go (README, Audit log): each to the log (INFO) and to partition 0's eventsL
 * at once (an admin event), and in batches to the archive's append-only table. A failed archive write keeps its
 * batch and tries again after a pause that doubles from 1 s to 30 s; past MAX_WAITING entries the oldest is given
 * up, logged at ERROR with its content and counted (conveyor_audit_entries_total{result="lost"}). archive is null
 * on a node without one (then the log and eventsL hold it). Used on its verticle's context only.
 */
public final class AuditLog {
  private static final Logger log = LoggerFactory.getLogger(AuditLog.class);
  static final int MAX_WAITING = 10_000;
  static final int BATCH = 500;
  static final long MAX_PAUSE_MS = 30_000;
  private final Vertx vertx;
  private final StoreContext redis;
  private final ArchiveStore archive;
  private final NodeMetrics metrics;
  private final String node;
  private final ArrayDeque<AuditEntry> waiting = new ArrayDeque<>();
  private boolean writing;
  private long pauseMs;

  public AuditLog(Vertx vertx, StoreContext redis, ArchiveStore archive, NodeMetrics metrics, String node) {
    this.vertx = vertx;
    this.redis = redis;
    this.archive = archive;
    this.metrics = metrics;
    this.node = node;
  }

  /** The node the entries name. */
  String node() {
    return node;
  }

  /** Records an admin act: logged now, on eventsL now, in the archive with the next batch. */
  void record(AuditEntry e) {
    String json = e.toJson().encode();
    log.info("admin act: {}", json);
    AdminEvents.log(redis, e.at(), node, e.action(), json).onFailure(x -> {
          metrics.audit("event-failed", 1);
          log.warn("admin act not logged on eventsL ({}): {}", x.getMessage(), json);
        });
    if (archive == null) {
      return;
    }
    waiting.addLast(e);
    while (waiting.size() > MAX_WAITING) {
      metrics.audit("lost", 1);
      log.error("admin act lost to the archive's audit log ({} entries wait for it to take writes again): {}",
          MAX_WAITING, waiting.pollFirst().toJson().encode());
    }
    write();
  }

  private void write() {
    if (writing || waiting.isEmpty()) {
      return;
    }
    writing = true;
    List<AuditEntry> batch = new ArrayList<>();
    while (batch.size() < BATCH && !waiting.isEmpty()) {
      batch.add(waiting.pollFirst());
    }
    archive.appendAudit(batch).onComplete(ar -> {
      if (ar.succeeded()) {
        writing = false;
        pauseMs = 0;
        metrics.audit("stored", batch.size());
        write();
        return;
      }
      for (int i = batch.size() - 1; i >= 0; i--) {
        waiting.addFirst(batch.get(i));
      }
      pauseMs = Math.min(MAX_PAUSE_MS, Math.max(1000, pauseMs * 2));
      metrics.audit("retried", batch.size());
      log.warn("audit log: writing {} entries to {} failed ({}); {} wait, next try in {} ms", batch.size(),
          archive.describe(), ar.cause().getMessage(), waiting.size(), pauseMs);
      vertx.setTimer(pauseMs, t -> {
        writing = false;
        write();
      });
    });
  }
}
