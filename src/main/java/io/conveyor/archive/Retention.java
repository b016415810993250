package io.conveyor.archive;

import io.conveyor.model.Durations;
import io.conveyor.database.ArchiveStore;
import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * archive.retention: the archive leader of partition 0 (one node, however many partitions share the archive)
 * deletes the transactions that completed longer ago, in batches, once a minute; logs what it deleted. Then
 * audit.retention: the audit log's entries older than that, through the store's prune (the table refuses any
 * other DELETE). Owned by that ArchiveVerticle and used on its context only.
 */
final class Retention {
  private static final Logger log = LoggerFactory.getLogger(Retention.class);
  /** How often the leader of partition 0 deletes what is past archive.retention (by the node's clock). */
  static final long RETENTION_EVERY_MS = 60_000;
  /** Rows deleted per statement: a large backlog goes in many short deletes, never one long one. */
  static final int RETENTION_BATCH = 1000;
  /** One pass deletes for at most this long; the next pass goes on. */
  static final long RETENTION_PASS_MS = 30_000;
  private final ArchiveStore archive;
  private final Duration retention;
  private final Duration auditRetention;
  private final Ticker ticker;
  private long nextRetention;
  private boolean retaining;
  private boolean stopping;

  Retention(ArchiveStore archive, Duration retention, Ticker ticker) {
    this(archive, retention, Duration.ZERO, ticker);
  }

  Retention(ArchiveStore archive, Duration retention, Duration auditRetention, Ticker ticker) {
    this.ticker = ticker;
    this.archive = archive;
    this.retention = retention;
    this.auditRetention = auditRetention;
  }

  /** Deletes up to a batch of rows older than before (ms); answers how many went. */
  private interface Deletion {
    Future<Integer> before(long before, int limit);
  }

  /** Deletes what is past retention if a minute has gone since the last pass and this node may (due). */
  void pass(long now, boolean due) {
    if (retention.isZero() && auditRetention.isZero() || !due || retaining || now < nextRetention) {
      return;
    }
    retaining = true;
    nextRetention = now + RETENTION_EVERY_MS;
    long before = now - retention.toMillis();
    long until = ticker.nanos() + RETENTION_PASS_MS * 1_000_000;
    Future<Integer> transactions = retention.isZero() ? Future.succeededFuture(0)
        : deleteBatches(archive::deleteCompletedBefore, before, until, 0);
    transactions.onComplete(ar -> {
      if (auditRetention.isZero()) {
        retaining = false;
      } else {
        pruneAudit(now - auditRetention.toMillis(), until);
      }
      if (ar.failed()) {
        log.warn("archive retention: deleting what completed before {} failed: {}", Instant.ofEpochMilli(before),
            ar.cause().getMessage());
      } else if (ar.result() > 0) {
        log.info("archive retention: deleted {} transactions completed before {} (archive.retention {})", ar.result(),
            Instant.ofEpochMilli(before), Durations.format(retention));
      }
    });
  }

  /** A pass under way ends after its current batch. */
  void stop() {
    stopping = true;
  }

  private void pruneAudit(long before, long until) {
    deleteBatches(archive::pruneAuditBefore, before, until, 0).onComplete(ar -> {
      retaining = false;
      if (ar.failed()) {
        log.warn("audit retention: pruning entries before {} failed: {}", Instant.ofEpochMilli(before),
            ar.cause().getMessage());
      } else if (ar.result() > 0) {
        log.info("audit retention: pruned {} audit entries before {} (audit.retention {})", ar.result(),
            Instant.ofEpochMilli(before), Durations.format(auditRetention));
      }
    });
  }

  private Future<Integer> deleteBatches(Deletion deletion, long before, long untilNanos, int done) {
    return deletion.before(before, RETENTION_BATCH).compose(n -> {
      int total = done + n;
      if (n < RETENTION_BATCH || ticker.nanos() > untilNanos || stopping) {
        return Future.succeededFuture(total);
      }
      if (total % 100_000 < RETENTION_BATCH) {
        log.info("archive retention: {} deleted so far", total);
      }
      return deleteBatches(deletion, before, untilNanos, total);
    });
  }
}
