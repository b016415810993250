package io.conveyor.bus;

import io.vertx.core.Vertx;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this node leads a leader-only role, as its last lease call said. A change is logged and
 * published cluster-wide on conveyor.lease.changed, so operators and other roles hear of it at once.
 */
public final class Leadership {
  private static final Logger log = LoggerFactory.getLogger(Leadership.class);
  private final Vertx vertx;
  private final String role;
  private final String activity;
  private final String nodeId;
  private final Clock clock;
  private boolean leads;

  /** role as published (reaper, archive, webhooks); activity as logged ("archiving to PostgreSQL …"). */
  public Leadership(Vertx vertx, String role, String activity, String nodeId, Clock clock) {
    this.vertx = vertx;
    this.role = role;
    this.activity = activity;
    this.nodeId = nodeId;
    this.clock = clock;
  }

  public boolean leads() {
    return leads;
  }

  public void update(boolean now) {
    if (now == leads) {
      return;
    }
    leads = now;
    log.info(now ? "node {} leads {}" : "node {} no longer leads {}", nodeId, activity);
    vertx.eventBus().publish(Addresses.LEASE_CHANGED, Messages.encode(new LeaseChanged(role, nodeId, now,
        clock.millis())));
  }
}
