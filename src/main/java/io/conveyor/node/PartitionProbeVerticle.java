package io.conveyor.node;

import io.conveyor.redis.PartitionProbe;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;

/**
 * Probes each partition's master every second (PartitionProbe), so the node's PartitionHealth knows a quiet
 * partition too. On a link of its own: a probe that hangs must not hold the heartbeat, and the link's own timeout
 * replaces only this link. Deployed by the heartbeat verticle, one per node. At start, on a Redis Cluster, it warns once
 * when a master has cluster-require-full-coverage yes. An actor: its fields are touched on its
 * own context only.
 */
public final class PartitionProbeVerticle extends VerticleBase {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(PartitionProbeVerticle.class);
  private static final long EVERY_MS = 1_000;
  private final RedisAccess redis;
  private StoreContext redisContext;
  private PartitionProbe probe;
  private long timer = -1;
  private boolean stopping;

  public PartitionProbeVerticle(RedisAccess redis) {
    this.redis = redis;
  }

  @Override
  public Future<?> start() {
    redisContext = redis.open(vertx);
    probe = new PartitionProbe(redisContext);
    probe.fullCoverage().onSuccess(yes -> {
      if (!yes.isEmpty()) {
        log.warn("Redis Cluster masters {} have cluster-require-full-coverage yes: during each failover every master "
            + "refuses every command (CLUSTERDOWN) for about a second, so all partitions stall, not only the failed "
            + "master's. Set cluster-require-full-coverage no on every node (README, Redis Cluster and Sentinel)", yes);
      }
    });
    next();
    return Future.succeededFuture();
  }

  /** The next round a second after the last one ended (a round is bounded by redis.partitionProbeTimeout). */
  private void next() {
    if (!stopping) {
      timer = vertx.setTimer(EVERY_MS, t -> probe.round().onComplete(ar -> next()));
    }
  }

  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(timer);
    return redisContext.close();
  }
}
