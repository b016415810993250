package io.conveyor.lease;

import io.conveyor.bus.Addresses;
import io.conveyor.bus.LeaseChanged;
import io.conveyor.bus.Messages;
import io.conveyor.redis.LeaderRole;
import io.conveyor.redis.LivenessStore;
import io.conveyor.time.Ticker;
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
 * <p>
 * A lease lasts its length from when the call that renewed it was sent, by this node's ticker:
 * Redis set it at some moment after that, so the lease in Redis outlives what this node believes, and no
 * other node can lead before the grace after it has passed too. A leader that was paused, or whose renewal
 * answer came late, therefore stops acting before anyone else can start.
 */
public final class Leadership {
  private static final Logger log = LoggerFactory.getLogger(Leadership.class);
  private final Vertx vertx;
  private final LeaderRole role;
  private final int partition;
  private final String activity;
  private final String nodeId;
  private final LivenessStore liveness;
  private final Clock clock;
  private final Ticker ticker;
  private final java.time.Duration lease;
  private final long leaseNanos;
  private boolean leads;
  private long renewedAt;

  /**
   * The role in one partition (-1: the role's cluster-wide lease); activity is how the log names the role's
   * work ("archiving to PostgreSQL …"); the lease is counted on the ticker.
   */
  public Leadership(Vertx vertx, LeaderRole role, int partition, String activity, String nodeId,
                    LivenessStore liveness, Clock clock, Ticker ticker, java.time.Duration lease) {
    this.vertx = vertx;
    this.role = role;
    this.partition = partition;
    this.activity = activity;
    this.nodeId = nodeId;
    this.liveness = liveness;
    this.clock = clock;
    this.ticker = ticker;
    this.lease = lease;
    this.leaseNanos = lease.toNanos();
  }

  /** The moment to pass to {@link #update(boolean, long)}: take it just before sending a lease call. */
  public long asking() {
    return ticker.nanos();
  }

  /** True when the last lease call made this node leader and its lease, counted from the call, still runs. */
  public boolean leads() {
    return leads && ticker.nanos() - renewedAt < leaseNanos;
  }

  /** What a lease call sent at askedAt answered. */
  public void update(boolean now, long askedAt) {
    if (now) {
      renewedAt = askedAt;
    }
    update(now);
  }

  private void update(boolean now) {
    if (now == leads) {
      return;
    }
    leads = now;
    log.info(now ? "node {} leads {}" : "node {} no longer leads {}", nodeId, activity);
    vertx.eventBus().publish(Addresses.LEASE_CHANGED, Messages.encode(new LeaseChanged(
        role.name().toLowerCase(Locale.ROOT), partition, nodeId, now, clock.millis())));
  }

  /** Takes or renews the lease with a plain lease call (lease.lua); true when this node leads now. */
  public Future<Boolean> renew(java.time.Duration grace) {
    long asked = asking();
    return liveness.lease(role, partition, nodeId, lease, grace).map(now -> {
      update(now, asked);
      return now;
    });
  }

  /** Frees the lease if this node holds it, so another node leads at once instead of after lease + grace. */
  public Future<Void> handOn() {
    if (!leads) {
      return Future.succeededFuture();
    }
    return liveness.breakLease(role, partition, List.of(nodeId)).map(freed -> {
      update(false);
      return null;
    });
  }
}
