package io.conveyor.api;

import io.conveyor.redis.PartitionHealth;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.util.function.IntFunction;

/**
 * This node's view of each partition's health (redis.PartitionHealth), as /health/ready and /api/v1/cluster show it
 * (issue 36). A minority of partitions failing leaves the node degraded (it still takes traffic: new starts go to
 * the partitions that answer); a majority failing makes it not ready; a suspect one is listed and changes neither.
 */
final class PartitionView {
  /** What the partitions make of readiness. */
  enum Verdict {
    READY, DEGRADED, NOT_READY
  }

  private PartitionView() {
  }

  static Verdict verdict(PartitionHealth health) {
    int failing = 0;
    for (int p = 0; p < health.partitions(); p++) {
      failing += health.state(p) == PartitionHealth.State.FAILING ? 1 : 0;
    }
    if (failing * 2 > health.partitions()) {
      return Verdict.NOT_READY;
    }
    // a suspect partition (one call out longer than redis.partitionSuspectAfter) is listed but leaves the node ready:
    // a slow moment of a loaded machine is not an outage, and a probe's verdict must not flap on it
    return failing > 0 ? Verdict.DEGRADED : Verdict.READY;
  }

  /**
   * The readiness field: "ok" with one partition that is ok; else {ok: count, failing: [{partition, state, reason,
   * since}]} listing the partitions not ok (failing or suspect), kept small for a probe.
   */
  static Object readiness(PartitionHealth health, Clock clock) {
    int ok = health.ok().size();
    if (health.partitions() == 1 && ok == 1) {
      return "ok";
    }
    JsonArray notOk = new JsonArray();
    for (int p = 0; p < health.partitions(); p++) {
      if (health.state(p) != PartitionHealth.State.OK) {
        notOk.add(new JsonObject().put("partition", p).mergeIn(state(health, p, clock)));
      }
    }
    JsonObject out = new JsonObject().put("ok", ok);
    return notOk.isEmpty() ? out : out.put("failing", notOk);
  }

  /**
   * Partition p's {state, reason, since} (reason empty when ok; since: when this node saw it enter that state, or
   * when the node started), with master (host:port) on a Redis Cluster when masterOf names one.
   */
  static JsonObject state(PartitionHealth health, int p, Clock clock, IntFunction<String> masterOf) {
    JsonObject out = state(health, p, clock);
    String master = masterOf.apply(p);
    return master == null ? out : out.put("master", master);
  }

  private static JsonObject state(PartitionHealth health, int p, Clock clock) {
    PartitionHealth.Status s = health.status(p);
    return new JsonObject().put("state", s.state().wire()).put("reason", s.reason())
        .put("since", health.since(p, clock).toString());
  }
}
