package io.conveyor.redis;

import java.time.Duration;

/**
 * redis.waitReplicas and redis.waitTimeout: after a script that starts or completes transactions, WAIT until
 * count replicas have its writes, for at most timeout. Redis replicates asynchronously, so without this a
 * master that fails right after answering can take acknowledged writes with it. Fewer replicas in time
 * fail the call (RedisUnavailable): the writes stand on the master, but are not known to be safe.
 */
public record Replicas(int count, Duration timeout) {
  public static final Replicas NONE = new Replicas(0, Duration.ZERO);
}
