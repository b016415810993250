package io.conveyor.api;

import io.conveyor.metrics.NodeMetrics;
import io.conveyor.redis.ControlStore;
import io.conveyor.redis.LeaderRole;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.StuckStore;
import io.vertx.core.Future;
import io.vertx.ext.web.Router;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * GET /metrics: the node's meters and Vert.x's, in Prometheus text, with the gauges read from Redis per scrape.
 * group is this node's: its limits and fair-share waits are read from Redis for each scrape (a few reads); so are
 * the stuck list's counts (one read a partition) and whether each leader role has a leader (one GET a role and
 * partition; role judge, partition all: the cluster-wide judging of dead nodes, with several partitions).
 */
public record MetricsRoutes(ArchiveAdmin archiveAdmin, ControlStore limitsView, StuckStore stuck,
                            LivenessStore leases, int partitions, NodeMetrics metrics, String group) implements RouteGroup {
  @Override
  public void mount(Router r) {
    archiveAdmin.mountLagGauge(r);
    r.get("/metrics").handler(ctx -> Future.join(limitsView.waiting(group).onSuccess(v -> metrics.limits(group, v)),
            stuck.counts().onSuccess(metrics::stuck), leaders().onSuccess(metrics::leaders))
        .onComplete(ar -> ctx.response().putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8")
            .end(metrics.scrape())));
  }

  /** "role/partition" → whether a node holds that lease, for every leader role in every partition. */
  private Future<Map<String, Boolean>> leaders() {
    Map<String, Future<String>> each = new TreeMap<>();
    List<Future<String>> all = new ArrayList<>();
    if (partitions > 1) {
      // with several partitions the judging of dead nodes has a cluster-wide lease of its own
      Future<String> judge = leases.leader(LeaderRole.REAPER, -1);
      each.put("judge/all", judge);
      all.add(judge);
    }
    for (int p = 0; p < partitions; p++) {
      for (LeaderRole role : LeaderRole.values()) {
        Future<String> f = leases.leader(role, p);
        each.put(role.name().toLowerCase(Locale.ROOT) + "/" + p, f);
        all.add(f);
      }
    }
    return Future.join(all).transform(ar -> {
      Map<String, Boolean> out = new TreeMap<>();
      each.forEach((k, f) -> {
        if (f.succeeded()) {
          out.put(k, f.result() != null);
        }
      });
      return Future.succeededFuture(out);
    });
  }
}
