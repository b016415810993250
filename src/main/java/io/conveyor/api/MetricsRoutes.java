package io.conveyor.api;

import io.conveyor.metrics.NodeMetrics;
import io.conveyor.redis.ControlStore;
import io.vertx.ext.web.Router;

/**
 * GET /metrics: the node's meters and Vert.x's, in Prometheus text, with the gauges read from Redis per scrape.
 * group is this node's: its limits and fair-share waits are read from Redis for each scrape (a few reads).
 */
public record MetricsRoutes(ArchiveAdmin archiveAdmin, ControlStore limitsView, NodeMetrics metrics, String group)
    implements RouteGroup {
  @Override
  public void mount(Router r) {
    archiveAdmin.mountLagGauge(r);
    r.get("/metrics").handler(ctx -> limitsView.waiting(group).onComplete(ar -> {
      if (ar.succeeded()) {
        metrics.limits(group, ar.result());
      }
      ctx.response().putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8").end(metrics.scrape());
    }));
  }
}
