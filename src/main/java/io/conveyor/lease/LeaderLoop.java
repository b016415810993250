package io.conveyor.lease;

import io.conveyor.bus.Addresses;
import io.conveyor.redis.LeaderRole;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.StoreContext;
import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The loop every leader role (archive, webhooks, scheduler, reaper) runs in one partition: one round at a time
 * (a tick asked for during a round runs right after it), the next round timed from the end of the last, and,
 * while this node leads, at least one round every third of the lease, so the lease is renewed even when the
 * role's own interval is longer or its work holds the other rounds back. It holds the partition's lease
 * ({@link Leadership}), says whether the assignment gives the partition to this node, hands the lease on,
 * and may wake on conveyor.node.died (the dead node may have led). The role keeps only its own work: a round.
 * <p>
 * Built in the role's start() and used on the role's context only, like the verticle's own fields.
 */
public final class LeaderLoop {
  private static final Logger log = LoggerFactory.getLogger(LeaderLoop.class);
  /** What a round answers when it arms nothing: the role ticks again itself (say, when a write ends). */
  public static final long NO_TIMER = -1;
  private final Vertx vertx;
  private final io.vertx.core.Context context;
  private final Seat seat;
  private final Leadership leadership;
  private final LivenessStore liveness;
  private final long renewEveryMillis;
  private final Supplier<Future<Long>> round;
  private long timer = -1;
  private boolean running;
  private boolean again;
  private boolean stopping;

  /**
   * Where a role leads: its role, its partition, this node, the node's assignment and its ticker. The
   * composition root builds one per role and partition; the role reads its partition and node from it.
   */
  public record Seat(LeaderRole role, int partition, String nodeId, Assignment assignment, Ticker ticker) {
    /** The role's name in node.roles and in the assignment (archive, webhooks, scheduler, reaper). */
    public String roleName() {
      return role.name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * round is the role's work: it answers how long until the next round (0: at once; NO_TIMER: none, the role
   * ticks itself). activity is how the log names the role's work; lease is the lease's length.
   */
  public LeaderLoop(Vertx vertx, StoreContext redis, Seat seat, String activity, Duration lease,
                    Supplier<Future<Long>> round) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.seat = seat;
    this.round = round;
    this.liveness = new LivenessStore(redis);
    this.leadership = new Leadership(vertx, seat.role(), seat.partition(), activity, seat.nodeId(), liveness,
        redis.clock(), seat.ticker(), lease);
    this.renewEveryMillis = Math.max(1, lease.toMillis() / 3);
  }

  /** Ticks whenever conveyor.node.died is heard (reap.lua freed the dead node's leases of this role). */
  public Future<Void> wakeOnNodeDied() {
    return vertx.eventBus().consumer(Addresses.NODE_DIED, m -> tick()).completion();
  }

  /** A round now, or right after the one under way. */
  public void tick() {
    if (stopping) {
      return;
    }
    if (running) {
      again = true;
      return;
    }
    vertx.cancelTimer(timer);
    running = true;
    Future<Long> r;
    try {
      r = round.get();
    } catch (RuntimeException e) {
      r = Future.failedFuture(e);
    }
    r.onComplete(ar -> {
      running = false;
      if (ar.failed()) {
        log.warn("{} {}: a round failed: {}", seat.roleName(), seat.partition(), ar.cause().getMessage());
      }
      if (again) {
        again = false;
        tick();
      } else {
        next(ar.succeeded() ? ar.result() : renewEveryMillis);
      }
    });
  }

  /**
   * The next round in ms (0: at once; NO_TIMER: none, unless this node leads, when the renewal comes after a
   * third of the lease). A leader never waits longer than that.
   */
  public void next(long millis) {
    if (stopping) {
      return;
    }
    vertx.cancelTimer(timer);
    long wait = millis < 0 ? Long.MAX_VALUE : millis;
    if (leadership.leads()) {
      wait = Math.min(wait, renewEveryMillis);
    }
    if (wait == Long.MAX_VALUE) {
      timer = -1;
    } else if (wait <= 0) {
      timer = -1;
      context.runOnContext(v -> tick());
    } else {
      timer = vertx.setTimer(wait, t -> tick());
    }
  }

  /** True while a round is under way. */
  public boolean running() {
    return running;
  }

  /** Whether the assignment gives this partition of the role to this node. */
  public boolean wanted() {
    return seat.assignment().wants(seat.roleName(), seat.partition());
  }

  /** This node stands down from the role for a while (see Assignment.away). */
  public void away(Duration length) {
    seat.assignment().away(seat.roleName(), length);
  }

  /** The groups the live nodes serve, as the heartbeat last saw them. */
  public java.util.Set<String> groups() {
    return seat.assignment().groups();
  }

  public Leadership leadership() {
    return leadership;
  }

  /** The moment to pass to {@link #update(boolean, long)}: just before a call that renews the lease. */
  public long asking() {
    return leadership.asking();
  }

  /** What a lease call sent at askedAt answered. */
  public void update(boolean leads, long askedAt) {
    leadership.update(leads, askedAt);
  }

  public boolean leads() {
    return leadership.leads();
  }

  /** Hands the lease on (when this node holds it); a failure is only logged: the lease runs out by itself. */
  public void letGo() {
    leadership.handOn().onFailure(e -> log.debug("handing the {} lease on: {}", seat.roleName(), e.getMessage()));
  }

  /** Frees the lease if this node holds it, so another node leads at once instead of after lease + grace. */
  public Future<Void> handOn() {
    return leadership.handOn();
  }

  /**
   * Another lease of the same role, taken by a plain lease call (lease.lua): the reaper's cluster-wide judging
   * (partition -1).
   */
  public Leadership other(int partition, String activity, Duration lease, java.time.Clock clock) {
    return new Leadership(vertx, seat.role(), partition, activity, seat.nodeId(), liveness, clock, seat.ticker(),
        lease);
  }

  /** No more rounds: the timer is cancelled, and a tick asked for from now on does nothing. */
  public void stop() {
    stopping = true;
    vertx.cancelTimer(timer);
  }
}
