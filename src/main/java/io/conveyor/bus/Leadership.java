package io.conveyor.bus;

import io.conveyor.redis.LeaderRole;
import io.conveyor.redis.LivenessStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this node leads a leader-only role, as its last lease call said. A change is logged and
 * published cluster-wide on conveyor.lease.changed, so operators and other roles hear of it at once; a
 * stopping leader hands its lease on instead of letting it run out.
 */
public final class Leadership {
  private static final Logger log = LoggerFactory.getLogger(Leadership.class);
  private final Vertx vertx;
  private final LeaderRole role;
  private final String activity;
  private final String nodeId;
  private final LivenessStore liveness;
  private final Clock clock;
  private boolean leads;

  /** activity is how the log names the role's work ("archiving to PostgreSQL …"). */
  public Leadership(Vertx vertx, LeaderRole role, String activity, String nodeId, LivenessStore liveness,
                    Clock clock) {
    this.vertx = vertx;
    this.role = role;
    this.activity = activity;
    this.nodeId = nodeId;
    this.liveness = liveness;
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
    vertx.eventBus().publish(Addresses.LEASE_CHANGED, Messages.encode(new LeaseChanged(
        role.name().toLowerCase(Locale.ROOT), nodeId, now, clock.millis())));
  }

  /** Frees the lease if this node holds it, so another node leads at once instead of after lease + grace. */
  public Future<Void> handOn() {
    if (!leads) {
      return Future.succeededFuture();
    }
    return liveness.breakLease(role, List.of(nodeId)).map(freed -> {
      update(false);
      return null;
    });
  }
}
