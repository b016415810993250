package io.conveyor;

import io.conveyor.api.AdminRoutes;
import io.conveyor.api.ApiGate;
import io.conveyor.api.ApiKeys;
import io.conveyor.api.ArchiveAdmin;
import io.conveyor.api.AuditLog;
import io.conveyor.api.AuditRoutes;
import io.conveyor.api.ClusterRoutes;
import io.conveyor.api.DashboardRoutes;
import io.conveyor.api.HealthRoutes;
import io.conveyor.api.MetricsRoutes;
import io.conveyor.api.PipelineRoutes;
import io.conveyor.api.RouteGroup;
import io.conveyor.api.ScheduleAdmin;
import io.conveyor.api.ScheduleRoutes;
import io.conveyor.api.SockJsRoutes;
import io.conveyor.api.StuckAdmin;
import io.conveyor.api.TransactionRoutes;
import io.conveyor.config.Config;
import io.conveyor.database.ArchiveStore;
import io.conveyor.domain.Search;
import io.conveyor.domain.Transactions;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.redis.ControlStore;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.QuarantineStore;
import io.conveyor.redis.QueueStore;
import io.conveyor.redis.ReadStore;
import io.conveyor.redis.ScheduleStore;
import io.conveyor.redis.StuckStore;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The composition root's part for the HTTP API: the route groups of one HttpApiVerticle, each given only what it
 * uses, built on the verticle's Vert.x, its own Redis context and its Transactions service on it. The order
 * is the router's: health and metrics, the gate, then the routes it guards.
 */
public final class HttpWiring {
  private final Config config;
  private final PipelineCatalog catalog;
  private final ArchiveStore archive;
  private final NodeMetrics metrics;
  private final List<String> pipelineFiles;
  private final Supplier<String> clusterState;
  private final String nodeId;

  /**
   * archive is null on a node without one; pipelineFiles are the pipelines this node published at start (readiness
   * checks they are in Redis); clusterState is the "cluster" readiness check (ok, not joined, held after a pause).
   */
  public HttpWiring(Config config, PipelineCatalog catalog, ArchiveStore archive, NodeMetrics metrics,
                    List<String> pipelineFiles, Supplier<String> clusterState) {
    this(config, catalog, archive, metrics, pipelineFiles, clusterState, "");
  }

  /** The same, for the node nodeId (its audit entries name it). */
  public HttpWiring(Config config, PipelineCatalog catalog, ArchiveStore archive, NodeMetrics metrics,
                    List<String> pipelineFiles, Supplier<String> clusterState, String nodeId) {
    this.nodeId = nodeId;
    this.config = config;
    this.catalog = catalog;
    this.archive = archive;
    this.metrics = metrics;
    this.pipelineFiles = List.copyOf(pipelineFiles);
    this.clusterState = clusterState;
  }

  /** The route groups for one verticle, in the order it mounts them. */
  public List<RouteGroup> on(Vertx vertx, StoreContext redis, Transactions tx) {
    ArchiveAdmin archiveAdmin = new ArchiveAdmin(new QuarantineStore(redis), config.archive().lagWarning(), metrics);
    Search search = new Search(new ReadStore(redis), redis.keys(), archive, Search.PER_CALL, redis.ticker(),
        config.http().searchBudget());
    List<RouteGroup> groups = new ArrayList<>();
    groups.add(new HealthRoutes(redis, tx, config.redis(), archive, archiveAdmin, pipelineFiles, clusterState));
    if (config.bridge().sockjs()) {
      groups.add(new SockJsRoutes(vertx, config.bridge(), config.api().keys(), config.http().maxBodyBytes()));
    }
    groups.add(new MetricsRoutes(archiveAdmin, new ControlStore(redis), new StuckStore(redis), new LivenessStore(redis),
        redis.keys().partitions(), metrics, config.node().group()));
    groups.add(new ApiGate(config.http(), new ApiKeys(config.api().keys()), new AuditLog(redis, metrics, nodeId,
        config.audit().maxWaiting()), redis.clock(), config.audit().reads()));
    groups.add(new PipelineRoutes(redis, catalog));
    groups.add(new ClusterRoutes(redis, config));
    TransactionRoutes starts = new TransactionRoutes(vertx, tx, new QueueStore(redis), search, config.http(),
        metrics);
    groups.add(starts);
    groups.add(new io.conveyor.api.EventRoutes(io.conveyor.domain.Events.on(tx, catalog, config), starts));
    groups.add(new AdminRoutes(vertx, redis, tx, search, archive, config));
    groups.add(new io.conveyor.api.PauseRoutes(redis, tx, search, archive));
    groups.add(new ScheduleRoutes(new ScheduleAdmin(new ScheduleStore(redis), tx, redis.clock())));
    groups.add(archiveAdmin);
    groups.add(new StuckAdmin(new StuckStore(redis)));
    groups.add(new AuditRoutes(archive));
    groups.add(new DashboardRoutes());
    return groups;
  }
}
