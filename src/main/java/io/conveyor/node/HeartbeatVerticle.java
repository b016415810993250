package io.conveyor.node;

import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says this node is alive: node:<nodeId>:heartbeat (what the node is and how busy) with a TTL of a few beats,
 * rewritten every heartbeat.interval, and the node registered in nodesZ. On a clean stop the node leaves
 * both, so the reaper has nothing to take over; the node stops it last, once its work has drained.
 */
public final class HeartbeatVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(HeartbeatVerticle.class);
  private final RedisAccess redis;
  private final Settings settings;
  private final Supplier<JsonObject> info;
  private StoreContext redisContext;
  private LivenessStore store;
  private long timer = -1;
  private boolean stopping;

  /** This node's id, how often it beats, and how long a beat lasts in Redis. */
  public record Settings(String nodeId, Duration interval, Duration ttl) {
  }

  /** info is what the heartbeat key holds, read anew at each beat. */
  public HeartbeatVerticle(RedisAccess redis, Settings settings, Supplier<JsonObject> info) {
    this.redis = redis;
    this.settings = settings;
    this.info = info;
  }

  @Override
  public Future<?> start() {
    redisContext = redis.open(vertx);
    store = new LivenessStore(redisContext);
    return beat().onSuccess(v -> next());
  }

  private Future<Void> beat() {
    return store.heartbeat(settings.nodeId(), info.get(), settings.ttl());
  }

  /** The next beat is timed from the end of this one, so beats never pile up behind a slow Redis. */
  private void next() {
    timer = vertx.setTimer(settings.interval().toMillis(), t -> beat()
        .onFailure(e -> log.warn("heartbeat failed ({}); the reaper may take this node's work over", e.getMessage()))
        .onComplete(ar -> {
          if (!stopping) {
            next();
          }
        }));
  }

  /** Leaves nodesZ and deletes the heartbeat: the node goes on purpose, with its work drained. */
  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(timer);
    return store.leave(settings.nodeId())
        .recover(e -> {
          log.warn("could not leave the node registry ({}); the reaper will", e.getMessage());
          return Future.succeededFuture();
        })
        .eventually(redisContext::close);
  }
}
