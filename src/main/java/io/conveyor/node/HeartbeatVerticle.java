package io.conveyor.node;

import io.conveyor.bus.Addresses;
import io.conveyor.lease.Assignment;
import io.conveyor.lease.Registration;
import io.conveyor.redis.Code;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says this node is alive: node:<nodeId>:heartbeat (what the node is and how busy) with a TTL of a few beats,
 * rewritten every heartbeat.interval, and the node registered in nodesZ. On a clean stop the node leaves
 * both, so the reaper has nothing to take over; the node stops it last, once its work has drained.
 * <p>
 * It is also how a node learns that Redis judged it dead. A beat answered FENCED means the reaper took the
 * node over (it was paused, or cut off from Redis, past its TTL; or Redis lost its data): the node fences
 * itself (the dequeue verticle stops, and puts back what it holds but does not run), restores what Redis must hold
 * (scripts, the config's pipelines), and only then registers again, as a new incarnation. A beat that
 * succeeds after failed ones restores the same things: Redis may have restarted empty. A late or fenced beat holds
 * the node until its cluster view is whole again; each accepted beat gives the registry to the view, which lets
 * it go (ClusterView).
 */
public final class HeartbeatVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(HeartbeatVerticle.class);
  private static final long FENCE_TIMEOUT_MS = 30_000;
  private final RedisAccess redis;
  private final Settings settings;
  private final Supplier<JsonObject> info;
  private final Function<StoreContext, Future<Void>> restore;
  private final Registration registration;
  private final Assignment assignment;
  private StoreContext redisContext;
  private LivenessStore store;
  private long timer = -1;
  private boolean stopping;
  private int incarnation = 1;
  private int failedBeats;
  private long beats;
  /** Redis came back, and restoring what the config owns has not succeeded yet. */
  private boolean restorePending;
  /** The beat (or fence) under way, so a stop waits for it instead of racing it. */
  private Future<Void> beating = Future.succeededFuture();
  private long failingSince;

  /** This node's id, how often it beats, and how long a beat lasts in Redis. */
  public record Settings(String nodeId, Duration interval, Duration ttl) {
  }

  /**
   * info is what the heartbeat key holds, read anew at each beat; restore puts back into Redis what the
   * node's config owns (scripts, pipelines), for when Redis comes back after an outage or empty. Each accepted
   * beat confirms the registration and gives its view of the live nodes to the node's partition assignment.
   */
  public HeartbeatVerticle(RedisAccess redis, Settings settings, Supplier<JsonObject> info,
                           Function<StoreContext, Future<Void>> restore, Registration registration,
                           Assignment assignment) {
    this.registration = registration;
    this.assignment = assignment;
    this.redis = redis;
    this.settings = settings;
    this.info = info;
    this.restore = restore;
  }

  @Override
  public Future<?> start() {
    redisContext = redis.open(vertx);
    store = new LivenessStore(redisContext);
    long sent = registration.now();
    return store.register(settings.nodeId(), info(), settings.ttl()).onSuccess(v -> {
      registration.confirmed(sent);
      next();
    }).compose(v -> vertx.deployVerticle(new PartitionProbeVerticle(redis))); // undeployed with this one
  }

  private JsonObject info() {
    // seq tells the other nodes' cluster views that this node beats (ClusterView), whatever its clock says
    return info.get().put("incarnation", incarnation).put("seq", ++beats);
  }

  private Future<Void> beat() {
    long sent = registration.now();
    return store.heartbeat(settings.nodeId(), info(), settings.ttl()).transform(ar -> {
      if (ar.failed()) {
        if (failedBeats++ == 0) {
          failingSince = registration.now();
          log.warn("heartbeat failed ({}); beating on; past heartbeat.ttl ({} s) the reaper may take this node "
              + "over", ar.cause().getMessage(), settings.ttl().toSeconds());
        }
        return Future.succeededFuture();
      }
      if (failedBeats > 0) {
        log.info("Redis answers heartbeats again after {} failed ({} ms)", failedBeats,
            (registration.now() - failingSince) / 1_000_000);
        failedBeats = 0;
        restorePending = true;
      }
      Code code = ar.result().code();
      if (code == Code.FENCED) {
        return fence();
      }
      registration.confirmed(sent);
      assignment.view(ar.result().view());
      if (code == Code.LATE) {
        registration.view().hold();
        log.warn("this node's heartbeat had expired (silent past heartbeat.ttl: paused, or cut off from Redis);"
            + " nobody took the node over, so it carries on once its cluster view is whole");
      }
      long held = registration.view().registered(settings.nodeId(), ar.result().view());
      if (held >= 0 && registration.view().whole()) {
        log.info("cluster view whole again (Hazelcast and Redis's registry agree): taking work after {} ms", held);
      } else if (held >= 0) {
        log.warn("cluster view still not whole after {} ms (a node registered in Redis outside this Hazelcast "
            + "cluster? see cluster.name); taking work anyway", held);
      }
      return restorePending ? restoreRedis() : Future.succeededFuture();
    });
  }

  private Future<Void> restoreRedis() {
    return restore.apply(redisContext)
        .onSuccess(v -> restorePending = false)
        .onFailure(e -> log.warn("could not restore scripts and pipelines in Redis ({}); trying at the next beat",
            e.getMessage()));
  }

  /**
   * Redis took this node over. Stop taking work and put back what it held (its late writes are refused
   * anyway), restore Redis's config-owned data, and register again. A failure leaves the node unregistered:
   * the next beat is FENCED again and the whole fence is tried again.
   */
  private Future<Void> fence() {
    registration.view().hold();
    log.warn("node {} was taken over: Redis judged it dead (silent past heartbeat.ttl {} s: paused, cut off "
        + "from Redis, or Redis lost its data). It drops its work and registers again", settings.nodeId(),
        settings.ttl().toSeconds());
    return vertx.eventBus().<Integer>request(Addresses.NODE_FENCE, null,
            new DeliveryOptions().setLocalOnly(true).setSendTimeout(FENCE_TIMEOUT_MS))
        .map(reply -> reply.body())
        .recover(e -> e instanceof ReplyException r && r.failureType() == ReplyFailure.NO_HANDLERS
            ? Future.succeededFuture(0) // no dequeue role: nothing to drop
            : Future.failedFuture(e))
        .compose(dropped -> restore.apply(redisContext)
            .compose(v -> {
              if (stopping) {
                // the node is on its way out: registering now would leave it to be reaped as dead
                return Future.failedFuture("the node is stopping");
              }
              restorePending = false;
              incarnation++;
              long sent = registration.now();
              return store.register(settings.nodeId(), info(), settings.ttl())
                  .onSuccess(r -> registration.confirmed(sent));
            })
            .map(v -> {
              log.info("node {} registered again (incarnation {}); {} transactions it held but did not run went "
                  + "back on their queues", settings.nodeId(), incarnation, dropped);
              vertx.eventBus().publish(Addresses.NODE_REGISTERED, incarnation,
                  new DeliveryOptions().setLocalOnly(true));
              return (Void) null;
            }))
        .onFailure(e -> log.warn("fencing this node failed ({}); trying again at the next beat", e.getMessage()));
  }

  /** The next beat is timed from the end of this one, so beats never pile up behind a slow Redis. */
  private void next() {
    timer = vertx.setTimer(settings.interval().toMillis(), t -> {
      beating = beat();
      beating.onComplete(ar -> {
        if (!stopping) {
          next();
        }
      });
    });
  }

  /** Leaves nodesZ and deletes the heartbeat: the node goes on purpose, with its work drained. */
  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(timer);
    return beating.transform(ar -> store.leave(settings.nodeId()))
        .recover(e -> {
          log.warn("could not leave the node registry ({}); the reaper will", e.getMessage());
          return Future.succeededFuture();
        })
        .eventually(redisContext::close);
  }
}
