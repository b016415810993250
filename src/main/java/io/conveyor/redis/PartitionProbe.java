package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A light look at each partition's master, so that a quiet partition's health is known too: EXISTS of a key in
 * the partition's slot (its processingZ), answered within redis.partitionProbeTimeout or counted an outage. Each
 * partition's answer feeds the node's PartitionHealth on its own, as soon as it comes.
 */
public final class PartitionProbe extends Store {
  public PartitionProbe(StoreContext r) {
    super(r);
  }

  /** Probes every partition at once; succeeds when each has answered or timed out. */
  public Future<Void> round() {
    long timeoutMs = Math.max(1, r.health().settings().probeTimeout().toMillis());
    List<Future<?>> each = new ArrayList<>(keys.partitions());
    for (int p : keys.all()) {
      int part = p;
      Future<?> answered = r.send(Request.cmd(Command.EXISTS).arg(keys.processingZ(p)))
          .timeout(timeoutMs, TimeUnit.MILLISECONDS)
          .recover(e -> Future.failedFuture(e instanceof RedisUnavailable ? e : new RedisUnavailable(
              new IllegalStateException("no answer to a probe within " + timeoutMs + " ms (redis.partitionProbeTimeout)",
                  e))));
      each.add(answered.onComplete(ar -> r.health().observe(part, ar)));
    }
    return Future.join(each).mapEmpty();
  }
}
