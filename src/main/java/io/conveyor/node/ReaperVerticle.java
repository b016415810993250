package io.conveyor.node;

import io.conveyor.bus.Addresses;
import io.conveyor.bus.MemberLeft;
import io.conveyor.bus.Messages;
import io.conveyor.bus.NodeDied;
import io.conveyor.lease.LeaderLoop;
import io.conveyor.lease.RoundFailures;
import io.conveyor.lease.Leadership;
import io.conveyor.redis.ControlStore;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.StatsStore;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes over the work of dead nodes. Every reaper.interval it asks for the reaper lease (reaperLock1/2);
 * the leader runs reap.lua, which puts back on their queues the transactions of every node whose heartbeat
 * has expired, and publishes conveyor.node.died for each. Redis is the one judge: when Hazelcast sees a
 * member leave (a conveyor.cluster.member-left hint), the reaper looks at once and again the moment that
 * node's heartbeat would expire, but takes nothing over while the heartbeat lives (after a pause, the
 * paused node's view says everyone else left). After Redis was unreachable, nobody is judged for one
 * heartbeat TTL, so the live nodes can beat first. The leader also wakes the transactions whose sleep is
 * over, carries cancel walks on, and samples queue lengths into the stats. The rounds, the renewal and the
 * hand-on are the LeaderLoop's (one round at a time, so a member-left hint never overlaps a round).
 */
public final class ReaperVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(ReaperVerticle.class);
  private final RedisAccess redis;
  private final Settings settings;
  private StoreContext redisContext;
  private LivenessStore liveness;
  private ControlStore control;
  private StatsStore stats;
  /** The look for stuck work in this reaper's partition (null when not configured). */
  private StuckWatch stuck;
  /** The cluster-wide judging's lease (with one partition, the loop's own); null where this reaper does not judge. */
  private Leadership leadership;
  private LeaderLoop loop;
  /** When (the ticker) the rounds began to fail on Redis; meaningful while redisFailed. */
  private long failingSince;
  private boolean redisFailed;
  /** Until then (the ticker) no heartbeat is judged: Redis has just come back. */
  private long graceUntil;

  /**
   * This node's id and group, the round interval, the lease and its grace, and the heartbeat TTL (an
   * in-flight entry older than that whose node is not registered can have no live owner); the archive delay
   * of what the cancel walk ends; how to look for stuck work (null: not at all).
   */
  public record Settings(String nodeId, String group, Duration interval, Duration lease, Duration grace,
                         Duration heartbeatTtl, Duration outageGrace, Duration archiveDelay, StuckWatch.Settings stuck) {
    public Settings(String nodeId, String group, Duration interval, Duration lease, Duration grace,
                    Duration heartbeatTtl, Duration outageGrace) {
      this(nodeId, group, interval, lease, grace, heartbeatTtl, outageGrace, Duration.ZERO, null);
    }
  }

  /**
   * The reaper of one partition (the seat's): it wakes that partition's sleepers and samples its queues while it
   * holds the partition's reaper lease, which the assignment says whether to ask for. The one of partition 0 also
   * judges dead nodes for the whole cluster, on a lease of its own (with one partition, the same lease).
   */
  public ReaperVerticle(RedisAccess redis, Settings settings, LeaderLoop.Seat seat) {
    this.redis = redis;
    this.settings = settings;
    this.seat = seat;
    this.partition = seat.partition();
  }

  private final LeaderLoop.Seat seat;
  private final int partition;
  /** The stats1H slot length (lua/lib/stats.lua), and the slot last sampled. */
  private static final long SAMPLE_SLOT_MS = 5_000;
  private long sampledSlot = -1;
  /** The partition's own work has a lease of its own (the loop's): there are several partitions. */
  private boolean several;
  private RoundFailures failedRounds;
  private long rounds;

  @Override
  public Future<?> start() {
    redisContext = redis.open(vertx);
    liveness = new LivenessStore(redisContext);
    control = new ControlStore(redisContext);
    stats = new StatsStore(redisContext);
    stuck = settings.stuck() == null ? null : new StuckWatch(new io.conveyor.redis.StuckStore(redisContext),
        settings.stuck(), new io.conveyor.redis.PipelineStore(redisContext), redisContext.clock());
    several = redis.keys().partitions() > 1;
    failedRounds = new RoundFailures(log, "reaper (partition " + partition + ")");
    loop = new LeaderLoop(vertx, redisContext, seat, several ? "waking sleepers (partition " + partition + ")"
        : "the reaper", settings.lease(), this::round);
    if (!several) {
      leadership = loop.leadership();
    } else if (partition == 0) {
      leadership = loop.other(-1, "the reaper", settings.lease(), redisContext.clock());
    }
    graceUntil = seat.ticker().nanos();
    loop.tick();
    if (leadership == null) {
      return Future.succeededFuture();
    }
    return vertx.eventBus().localConsumer(Addresses.MEMBER_LEFT,
        m -> memberLeft(Messages.decode(m.body(), MemberLeft.class).clusterNodeId())).completion();
  }

  /**
   * With one partition: the reaper lease, then (leading) judging, waking and sampling. With several, the
   * reaper of partition 0 judges on the cluster-wide lease, and each wakes and samples its partition on the
   * partition's lease, asked for only where the assignment gives it to this node.
   */
  private Future<Long> round() {
    rounds++;
    Future<Void> judged = leadership == null ? Future.succeededFuture() : judgeRound();
    return (several ? judged.transform(ar -> partitionRound().map(v -> ar.succeeded())) : judged.map(v -> true))
        .transform(ar -> {
          if (ar.succeeded() && ar.result()) {
            failedRounds.worked();
          }
          return Future.succeededFuture(settings.interval().toMillis());
        });
  }

  private Future<Void> judgeRound() {
    return leadership.renew(settings.grace())
        .compose(leader -> {
          redisAnswered();
          boolean judge = seat.ticker().nanos() - graceUntil >= 0;
          if (!leader) {
            return Future.<Void>succeededFuture();
          }
          // with several partitions, one a round is looked through for work no live node owns
          java.util.Collection<Integer> garbageIn = several
              ? List.of((int) (rounds % redis.keys().partitions())) : List.of(0);
          Future<Void> reaped = liveness.reap(judge, settings.heartbeatTtl(), garbageIn).map(this::report);
          return several ? reaped : reaped.compose(v -> walkCancels(0)).compose(v -> wakeSleepers(0));
        })
        .onFailure(this::roundFailed);
  }

  private Future<Void> partitionRound() {
    boolean wanted = loop.wanted();
    if (!wanted && !loop.leads()) {
      return Future.succeededFuture(); // another node's partition
    }
    if (!wanted) {
      return loop.handOn(); // it went to another node: let it take it now
    }
    long asked = loop.asking();
    return control.wakeLeading(partition, 1000, settings.nodeId(), settings.lease(), settings.grace())
        .compose(woken -> {
          loop.update(woken >= 0, asked);
          return woken >= 0 ? walkCancels(partition).compose(v -> sample(partition, Future.succeededFuture(woken)))
              : Future.<Void>succeededFuture();
        })
        .onFailure(this::roundFailed);
  }

  private void roundFailed(Throwable e) {
    if (!redisFailed) {
      redisFailed = true;
      failingSince = seat.ticker().nanos();
    }
    failedRounds.failed(e);
  }

  /**
   * Redis answers after failing: if it failed for so long (half a heartbeat TTL or more) that live nodes'
   * heartbeats may have expired meanwhile, nobody is judged for outageGrace, so they beat first. A shorter
   * failure cannot have let a live key expire (a node beats at least twice per TTL), so it grants nothing:
   * a flaky link must not keep a dead node from being taken over.
   */
  private void redisAnswered() {
    if (!redisFailed) {
      return;
    }
    redisFailed = false;
    long failedMs = (seat.ticker().nanos() - failingSince) / 1_000_000;
    if (failedMs * 2 >= settings.heartbeatTtl().toMillis()) {
      graceUntil = seat.ticker().nanos() + settings.outageGrace().toNanos();
      log.info("Redis answers again after {} ms: no node is judged dead for {} ms, so live nodes beat first",
          failedMs, settings.outageGrace().toMillis());
    }
  }

  /**
   * The partition's cancel walk goes on (cancel-walk.lua): what cancels left of large trees, up to 250 calls of
   * 20 a round, so no walk depends on the caller that began it staying alive.
   */
  private Future<Void> walkCancels(int p) {
    return control.walk(p, 0, 250, settings.archiveDelay()).onSuccess(left -> {
      if (left > 0) {
        log.info("cancel walk of partition {}: {} transactions still to cancel, next round", p, left);
      }
    }).mapEmpty();
  }

  /**
   * Sleepers whose time has come go back on their queues, up to 1000 a round (more wait a round); then the
   * queue lengths of every group a live node serves go into the stats.
   */
  private Future<Void> wakeSleepers(int p) {
    return sample(p, control.wake(p, 1000));
  }

  /** After the wake: the queue lengths into the stats, once per stats slot. */
  private Future<Void> sample(int p, Future<Integer> woken) {
    // the last sample in a 5 s stats slot stands for it: one a slot is enough
    long slot = redisContext.clock().millis() / SAMPLE_SLOT_MS;
    if (slot == sampledSlot) {
      return woken.mapEmpty();
    }
    return woken.compose(n -> served()).compose(some -> {
      Set<String> groups = new TreeSet<>(some);
      groups.add(settings.group());
      return stats.sampleQueues(p, groups);
    }).compose(n -> new io.conveyor.redis.EventStore(redisContext).trim(p))
        .compose(n -> lookForStuck(p))
        .onSuccess(n -> sampledSlot = slot).mapEmpty();
  }

  /** Once a stats slot, after the wake: stuck work in partition p listed, repaired or cleared (see StuckWatch). */
  private Future<Void> lookForStuck(int p) {
    if (stuck == null) {
      return Future.succeededFuture();
    }
    Set<String> groups = new TreeSet<>(loop.groups());
    groups.add(settings.group());
    return stuck.round(p, groups).onSuccess(r -> {
      if (r.found() + r.repaired() > 0) {
        log.warn("stuck work in partition {}: {} newly listed, {} repaired (see GET /api/v1/admin/stuck and "
            + "eventsL kind stuck)", p, r.found(), r.repaired());
      }
    }).<Void>mapEmpty().recover(e -> {
      log.warn("looking for stuck work in partition {} failed: {}", p, e.getMessage());
      return Future.succeededFuture();
    });
  }

  /** The groups live nodes serve: the heartbeat's view (no read of its own). */
  private Future<Set<String>> served() {
    return Future.succeededFuture(loop.groups());
  }

  private Void report(LivenessStore.Reaped reaped) {
    if (reaped.garbage() > 0) {
      log.warn("cleared {} processing entries with no live owner (see eventsL and exceptionZ)", reaped.garbage());
    }
    long now = redisContext.clock().millis();
    reaped.recovered().forEach((nodeId, n) -> {
      String why = "heartbeat expired";
      log.warn("node {} is gone ({}): put its {} running transactions back on their queues", nodeId, why, n);
      vertx.eventBus().publish(Addresses.NODE_DIED, Messages.encode(new NodeDied(nodeId, why, n,
          settings.nodeId(), now)));
    });
    return null;
  }

  /**
   * Hazelcast saw a member leave: a hint, not a verdict. Find the Conveyor node it was from its heartbeat and
   * look again right after that heartbeat would expire (a live node rewrites it meanwhile, and is left
   * alone); a node whose heartbeat is gone already is left to the next regular round.
   */
  private void memberLeft(String clusterNodeId) {
    liveness.nodes().compose(nodes -> {
      List<String> gone = nodes.entrySet().stream()
          .filter(e -> clusterNodeId.equals(e.getValue().getString("clusterNodeId")))
          .map(Map.Entry::getKey).toList();
      return Future.all(gone.stream().map(node -> liveness.heartbeatLeft(node).map(left -> {
        long ms = left == null ? 0 : left.toMillis() + 50;
        log.info("Hazelcast says node {} left; its heartbeat lasts {} ms more, the reaper looks then", node, ms);
        vertx.setTimer(Math.max(1, ms), t -> loop.tick());
        return null;
      })).toList());
    }).onFailure(e -> log.warn("looking at a departed member failed: {}", e.getMessage()));
  }

  /** Hands the reaper lease on (when it leads), so another node reaps at once. */
  @Override
  public Future<?> stop() {
    loop.stop();
    return (leadership == null ? Future.<Void>succeededFuture() : leadership.handOn())
        .compose(v -> several ? loop.handOn() : Future.<Void>succeededFuture())
        .onFailure(e -> log.warn("could not hand the reaper lease on ({}); it runs out by itself", e.getMessage()))
        .transform(ar -> redisContext.close());
  }
}
