package io.conveyor.api;

import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.AuditEntry;
import io.conveyor.redis.AdminEvents;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where audit entries go (README, Audit log), whoever made them (the HTTP gate, the event-bus API, the command line):
 * each to the log (INFO) and, in one script, to partition 0's eventsL as an admin event and to auditX, where it waits
 * for the archive leader of partition 0 to write it to the archive's append-only table (AdminEvents). An entry Redis
 * did not take is logged at ERROR with its content and counted (conveyor_audit_entries_total{result="event-failed"});
 * the oldest ones auditX drops past audit.maxWaiting are counted as lost. Holds no state of its own.
 */
public final class AuditLog {
  private static final Logger log = LoggerFactory.getLogger(AuditLog.class);
  private final StoreContext redis;
  private final NodeMetrics metrics;
  private final String node;
  private final int maxWaiting;

  /** node: the node the entries name (the command line names itself "cli"); maxWaiting: audit.maxWaiting. */
  public AuditLog(StoreContext redis, NodeMetrics metrics, String node, int maxWaiting) {
    this.redis = redis;
    this.maxWaiting = maxWaiting;
    this.metrics = metrics;
    this.node = node;
  }

  /** The node the entries name. */
  public String node() {
    return node;
  }

  /** Records an admin act: logged now, on eventsL and auditX now; fails when Redis did not take it (logged). */
  public Future<Void> record(AuditEntry e) {
    String json = e.toJson().encode();
    log.info("admin act: {}", json);
    return AdminEvents.log(redis, e.at(), node, e.action(), json, maxWaiting).<Void>map(dropped -> {
      if (dropped > 0) {
        metrics.audit("lost", dropped.intValue());
        log.error("audit log: the {} oldest entries waiting for the archive went to keep auditX at audit.maxWaiting"
            + " {} (is the archive down? they are in the log of the node that served them)", dropped, maxWaiting);
      }
      return null;
    }).onFailure(x -> {
      metrics.audit("event-failed", 1);
      log.error("admin act not recorded in Redis ({}); this line is its only record: {}", x.getMessage(), json);
    });
  }

  /** A refusal not recorded: past RefusalBudget's limit for its key (counted, summed up in a later entry). */
  public void suppressed() {
    metrics.audit("suppressed", 1);
  }
}
