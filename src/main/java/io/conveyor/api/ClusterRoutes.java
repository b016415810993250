package io.conveyor.api;

import static io.conveyor.api.HttpIo.json;

import io.conveyor.config.Config;
import io.conveyor.redis.ControlStore;
import io.conveyor.redis.LeaderRole;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.OwnerStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.StatsStore;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** GET /api/v1/cluster and GET /api/v1/stats (admin): the nodes, queues, limits and leaders, and the counters. */
public final class ClusterRoutes implements RouteGroup {
  private final StoreContext redis;
  private final LivenessStore liveness;
  private final StatsStore stats;
  private final ControlStore control;
  private final PipelineStore pipelines;
  /** The limits in force (README, Limits), as the cluster view shows them. */
  private final JsonObject limits;

  public ClusterRoutes(StoreContext redis, Config config) {
    this.redis = redis;
    this.liveness = new LivenessStore(redis);
    this.stats = new StatsStore(redis);
    this.control = new ControlStore(redis);
    this.pipelines = new PipelineStore(redis);
    this.limits = Edge.limits(config);
  }

  @Override
  public void mount(Router r) {
    r.get("/api/v1/cluster").handler(ctx -> json(ctx, cluster()));
    r.get("/api/v1/stats").handler(ctx -> json(ctx, Stats.read(stats, redis.clock(), ctx.request().params())));
  }

  /**
   * Per limit of a group that holds work back or counts runs (a pipeline's name, or '@' and an owner's):
   * {running, held, maxConcurrency, rateLimit}, the last two as set (null when not).
   */
  private static JsonObject limits(JsonObject waiting, JsonObject pipelines, JsonObject owners) {
    TreeSet<String> names = new TreeSet<>(waiting.getJsonObject("held").fieldNames());
    names.addAll(waiting.getJsonObject("running").fieldNames());
    JsonObject out = new JsonObject();
    for (String n : names) {
      JsonObject set;
      if (n.startsWith("@")) {
        set = owners.getJsonObject(n.substring(1), new JsonObject());
      } else {
        JsonObject p = pipelines.getJsonObject(n);
        set = p == null || p.getString("definition") == null ? new JsonObject() : new JsonObject(p.getString("definition"));
      }
      out.put(n, new JsonObject().put("running", waiting.getJsonObject("running").getLong(n, 0L))
          .put("held", waiting.getJsonObject("held").getLong(n, 0L))
          .put("maxConcurrency", set.getValue("maxConcurrency")).put("rateLimit", set.getValue("rateLimit")));
    }
    return out;
  }

  /**
   * The nodes with their heartbeat, the queues of every group they serve, and each role's leader: a lease
   * holder whose heartbeat is gone is shown as no leader (null), never as a dead node leading. With several
   * partitions, leaders.reaper is the judge of dead nodes (the others, scheduler among them, are partition 0's), and
   * partitions lists each partition's leaders and its health as this node sees it (state, reason, since; on a Redis
   * Cluster the master that holds it).
   */
  private Future<JsonObject> cluster() {
    int parts = redis.keys().partitions();
    List<Future<?>> reads = new ArrayList<>(List.of(liveness.nodes(),
        liveness.leader(LeaderRole.REAPER, -1)));
    for (int p = 0; p < parts; p++) {
      reads.add(liveness.leader(LeaderRole.REAPER, p));
      reads.add(liveness.leader(LeaderRole.ARCHIVE, p));
      reads.add(liveness.leader(LeaderRole.WEBHOOKS, p));
      reads.add(liveness.leader(LeaderRole.SCHEDULER, p));
    }
    reads.add(new OwnerStore(redis).list());
    reads.add(pipelines.pipelines());
    return Future.all(reads).compose(f -> {
      JsonObject ownerLimits = f.resultAt(reads.size() - 2);
      Map<String, JsonObject> nodes = f.resultAt(0);
      Set<String> groups = new TreeSet<>();
      nodes.values().forEach(n -> groups.add(n.getString("group")));
      // groups only pipelines name count too: work queued there waits for a node that may never come
      JsonObject known = f.resultAt(reads.size() - 1);
      known.forEach(e -> {
        String g = ((JsonObject) e.getValue()).getString("nodeGroup");
        if (g != null) {
          groups.add(g);
        }
      });
      List<Future<?>> per = new ArrayList<>();
      for (String g : groups) {
        per.add(stats.queueLengths(g));
        per.add(control.groupState(g, "read", null));
        per.add(control.waiting(g));
      }
      return Future.all(per).map(q -> {
        JsonObject queues = new JsonObject();
        int i = 0;
        for (String g : groups) {
          ControlStore.GroupState state = q.resultAt(i * 3 + 1);
          JsonObject waiting = q.resultAt(i * 3 + 2);
          long serving = nodes.values().stream().filter(n -> g.equals(n.getString("group"))).count();
          // beyond the group's queues: starts waiting their owner's turn (fair share), work held by its
          // pipeline's rate limit or concurrency cap
          long owners = waiting.getJsonObject("owners").stream()
              .mapToLong(e -> ((JsonObject) e.getValue()).getLong("waiting")).sum();
          long held = waiting.getJsonObject("held").stream().mapToLong(e -> (Long) e.getValue()).sum();
          queues.put(g, q.<JsonObject>resultAt(i * 3).copy().put("state", state.state()).put("inFlight",
              state.inFlight()).put("nodes", serving).put("waiting", owners).put("held", held)
              .put("limits", limits(waiting, known, ownerLimits)));
          i++;
        }
        JsonObject out = new JsonObject().put("now", Instant.ofEpochMilli(redis.clock().millis()).toString())
            .put("nodes", new JsonObject(new LinkedHashMap<>(nodes)))
            .put("queues", queues).put("limits", limits.copy()).put("leaders", new JsonObject().put("reaper", alive(nodes, f.resultAt(1)))
                .put("archive", alive(nodes, f.resultAt(3))).put("webhooks", alive(nodes, f.resultAt(4)))
                .put("scheduler", alive(nodes, f.resultAt(5))));
        if (parts > 1) {
          JsonArray each = new JsonArray();
          for (int p = 0; p < parts; p++) {
            each.add(new JsonObject().put("partition", p).put("reaper", alive(nodes, f.resultAt(2 + 4 * p)))
                .put("archive", alive(nodes, f.resultAt(3 + 4 * p))).put("webhooks", alive(nodes, f.resultAt(4 + 4 * p)))
                .put("scheduler", alive(nodes, f.resultAt(5 + 4 * p)))
                .mergeIn(PartitionView.state(redis.health(), p, redis.clock(), this::master)));
          }
          out.put("partitions", each);
        }
        return out;
      });
    });
  }

  /** On a Redis Cluster, the master holding partition p's slot as this link's slot map says (read, not asked). */
  private String master(int p) {
    return redis.link().master(redis.keys().processingZ(p));
  }

  private static String alive(Map<String, JsonObject> nodes, String leader) {
    return leader != null && nodes.containsKey(leader) ? leader : null;
  }
}
