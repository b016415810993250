package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
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

  /**
   * On a Redis Cluster, the masters (host:port) whose cluster-require-full-coverage is yes: there every master
   * refuses every command (CLUSTERDOWN) for about a second of each failover, so one master's failover stalls all
   * partitions. A master that refuses CONFIG (a managed Redis) or does not answer is left out; on one Redis, none.
   */
  public Future<java.util.List<String>> fullCoverage() {
    String name = "cluster-require-full-coverage";
    return r.link().eachMaster(Request.cmd(Command.CONFIG).arg("GET").arg(name)).map(answers -> {
      List<String> yes = new ArrayList<>();
      answers.forEach((master, reply) -> {
        Response value = reply == null ? null : reply.isMap() ? reply.get(name) : reply.size() >= 2 ? reply.get(1) : null;
        if (value != null && "yes".equalsIgnoreCase(value.toString())) {
          yes.add(master);
        }
      });
      return yes;
    });
  }
}
