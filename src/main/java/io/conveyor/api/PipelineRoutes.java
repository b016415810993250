package io.conveyor.api;

import static io.conveyor.api.HttpIo.body;
import static io.conveyor.api.HttpIo.json;

import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.pipeline.ChildCycles;
import io.conveyor.pipeline.CompiledPipeline;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.pipeline.PipelineException;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.ReadStore;
import io.conveyor.redis.Rollouts;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** /api/v1/pipelines (admin): list, read, upload, disable, enable and delete pipelines. */
public final class PipelineRoutes implements RouteGroup {
  private static final Logger log = LoggerFactory.getLogger(PipelineRoutes.class);
  private final StoreContext redis;
  private final PipelineStore pipelines;
  private final PipelineCatalog catalog;
  private final PipelineAdmin lifecycle;
  private final PipelineVersions versions;
  private final Rollouts rollouts;

  /** An upload is checked by catalog's parser (the node's step types) and published through it. */
  public PipelineRoutes(StoreContext redis, PipelineCatalog catalog) {
    this.redis = redis;
    this.pipelines = new PipelineStore(redis);
    this.catalog = catalog;
    this.lifecycle = new PipelineAdmin(pipelines, new ReadStore(redis));
    this.versions = new PipelineVersions(pipelines, new io.conveyor.redis.StatsStore(redis), redis.clock());
    this.rollouts = new Rollouts(redis);
  }

  @Override
  public void mount(Router r) {
    r.get("/api/v1/pipelines").handler(ctx -> json(ctx, pipelines.pipelines()));
    r.get("/api/v1/pipelines/:name/graph.svg").handler(this::graph);
    r.get("/api/v1/pipelines/:name/versions").handler(ctx -> json(ctx, versions.list(ctx.pathParam("name"))));
    r.get("/api/v1/pipelines/:name/versions/:version").handler(ctx -> json(ctx,
        versions.one(ctx.pathParam("name"), ctx.pathParam("version"))));
    r.get("/api/v1/pipelines/:name").handler(ctx -> json(ctx, pipelines.pipelines().compose(all ->
        all.containsKey(ctx.pathParam("name")) ? Future.succeededFuture(all.getJsonObject(ctx.pathParam("name")))
            : Future.failedFuture(new TxException(Kind.NOT_FOUND, "no pipeline " + ctx.pathParam("name"), null,
                null)))));
    r.put("/api/v1/pipelines/:name").handler(ctx -> json(ctx, body(ctx).compose(b -> upload(ctx, b))));
    r.post("/api/v1/pipelines/:name/disable").handler(ctx -> json(ctx, lifecycle.setDisabled(ctx.pathParam("name"),
        true)));
    r.post("/api/v1/pipelines/:name/enable").handler(ctx -> json(ctx, lifecycle.setDisabled(ctx.pathParam("name"),
        false)));
    r.get("/api/v1/admin/pipelines/:name/rollout").handler(ctx -> json(ctx, rollouts.state(ctx.pathParam("name"))));
    r.post("/api/v1/admin/pipelines/:name/rollout").handler(ctx -> json(ctx, body(ctx, "action").compose(b ->
        rollout(ctx.pathParam("name"), b.getValue("action")))));
    r.delete("/api/v1/pipelines/:name").handler(ctx -> json(ctx, lifecycle.delete(ctx.pathParam("name"),
        "true".equals(ctx.request().getParam("force")))));
  }

  /**
   * The pipeline drawn (PipelineGraph): its current version, or the one ?version= names; with its counts and each
   * step's attempts and p50/p99 over the last hour from the 60 s stats series.
   */
  private void graph(RoutingContext ctx) {
    String name = ctx.pathParam("name");
    String version = ctx.request().getParam("version");
    if (version != null && !version.matches("[0-9a-f]{1,64}")) {
      HttpIo.problem(ctx, TxException.invalid("version", "expected a pipeline version (hex digits)"));
      return;
    }
    Future<JsonObject> drawn = version != null ? versions.drawable(name, version)
        : pipelines.pipelines().compose(all -> all.getValue(name) instanceof JsonObject stored
            ? Future.succeededFuture(stored) : Future.failedFuture(PipelineVersions.notFound(name)));
    drawn.compose(stored -> versions.lastHour(name).map(hour -> PipelineGraph.svg(name, stored, hour)))
        .onSuccess(svg -> ctx.response().putHeader("Content-Type", PipelineGraph.CONTENT_TYPE)
            .putHeader("Cache-Control", "no-store").end(svg))
        .onFailure(e -> HttpIo.problem(ctx, e));
  }

  /** POST .../rollout {"action": "promote"|"rollback"}: ends the rollout under way (redis/Rollouts). */
  private Future<JsonObject> rollout(String name, Object action) {
    if (!"promote".equals(action) && !"rollback".equals(action)) {
      return Future.failedFuture(TxException.invalid("action", "expected promote (the new version takes every "
          + "start) or rollback (the stable version takes every start again), got " + action));
    }
    return rollouts.act(name, (String) action).onSuccess(state -> log.info("pipeline {}: rollout {}: every start "
        + "now runs version {}", name, state.getString("state"), state.getString("version")));
  }

  /** A pipeline uploaded by an admin: checked like a file (its name must be the path's), then published. */
  private Future<JsonObject> upload(RoutingContext ctx, JsonObject definition) {
    String name = ctx.pathParam("name");
    if (!name.equals(definition.getValue("name"))) {
      return Future.failedFuture(TxException.invalid("name", "the body's name must be " + name));
    }
    CompiledPipeline p;
    try {
      p = catalog.parser().parse(definition, "upload of " + name);
    } catch (PipelineException e) {
      return Future.failedFuture(TxException.invalid("definition", e.getMessage()));
    }
    // an upload is the newest publication (its time is now); kept is set only if a clock ran ahead elsewhere
    String group = p.pipeline().nodeGroup();
    return catalog.publish(pipelines, p, redis.clock().millis()).compose(published ->
        Future.all(new LivenessStore(redis).nodes(), pipelines.pipelines()).map(f -> {
          Map<String, JsonObject> nodes = f.resultAt(0);
          JsonObject known = f.resultAt(1);
          JsonObject reply = new JsonObject().put("name", name).put("version", p.version()).put("nodeGroup", group);
          if (p.rolloutShare() > 0 && published.kept() == null) {
            reply.put("rollout", new JsonObject().put("share", p.rolloutShare()));
          }
          List<String> warnings = new ArrayList<>();
          if (nodes.values().stream().noneMatch(n -> group.equals(n.getString("group")))) {
            warnings.add("no live node serves group " + group + ": its transactions stay queued until one"
                + " starts with node.group " + group);
          }
          List<String> missing = p.pipeline().references().stream()
              .filter(ref -> !known.containsKey(ref) && !ref.equals(name)).toList();
          if (!missing.isEmpty()) {
            warnings.add("it names pipelines not published yet: " + String.join(", ", missing) + " (accepted, as "
                + "pipelines may be published in any order; a step that reaches one fails internal-error until it is)");
          }
          String cycle = ChildCycles.through(name, ChildCycles.graph(known));
          if (cycle != null) {
            warnings.add("its child pipelines form a cycle: " + cycle + " (accepted: a recursion that ends by itself "
                + "is legal; one that does not fails with depth-exceeded at limits.maxDepth)");
          }
          if (!warnings.isEmpty()) {
            reply.put("warning", String.join("; ", warnings));
          }
          return published.kept() == null ? reply : reply.put("current", published.kept());
        }));
  }
}
