package io.conveyor.api;

import io.conveyor.bus.Addresses;
import io.conveyor.config.Config;
import io.conveyor.domain.Transactions;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.ControlStore;
import io.conveyor.redis.LeaderRole;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.QueueStore;
import io.conveyor.redis.ReadStore;
import io.conveyor.redis.StatsStore;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * The HTTP API under /api/v1 (contract: docs/openapi.yaml). Every /api/v1 route needs
 * "Authorization: Bearer <key>" with the client role and acts for the key's owner; errors are
 * application/problem+json. ?wait=N (seconds, at most http.maxWait) long-polls for the outcome.
 */
public final class HttpApiVerticle extends VerticleBase {
  static final String OWNER = "conveyor.owner";
  private final Transactions.Factory factory;
  private final Config config;
  private final Config.Http http;
  private final List<String> pipelineFiles;
  private final BooleanSupplier clusterJoined;
  private final ApiKeys keys;
  private StoreContext redis;
  private Transactions tx;
  private ReadStore reads;
  private PipelineStore pipelines;
  private QueueStore queue;
  private HttpServer server;

  /**
   * pipelineFiles are the pipelines this node published at start (readiness checks they are in Redis);
   * clusterJoined tells whether the node is in its cluster (or runs alone).
   */
  public HttpApiVerticle(Transactions.Factory factory, List<String> pipelineFiles, BooleanSupplier clusterJoined) {
    this.factory = factory;
    this.config = factory.config();
    this.http = config.http();
    this.pipelineFiles = pipelineFiles;
    this.clusterJoined = clusterJoined;
    this.keys = new ApiKeys(config.api().keys());
  }

  @Override
  public Future<?> start() {
    redis = factory.redis().open(vertx);
    tx = factory.on(redis);
    reads = new ReadStore(redis);
    pipelines = new PipelineStore(redis);
    queue = new QueueStore(redis);
    server = vertx.createHttpServer().requestHandler(router());
    return server.listen(http.port(), http.host());
  }

  /** Every route the API serves; a test holds it against docs/openapi.yaml. */
  public Router router() {
    Router r = Router.router(vertx);
    r.get("/health/live").handler(ctx -> ctx.json(new JsonObject().put("status", "up")));
    r.get("/health/ready").handler(ctx -> ready().onSuccess(checks -> {
      boolean ok = checks.stream().allMatch(c -> "ok".equals(c.getString("result")));
      JsonObject body = new JsonObject().put("status", ok ? "ready" : "not ready");
      checks.forEach(c -> body.put(c.getString("check"), c.getString("result")));
      ctx.response().setStatusCode(ok ? 200 : 503).putHeader("content-type", "application/json").end(body.encode());
    }));
    r.route("/api/v1/*").handler(BodyHandler.create(false).setBodyLimit(http.maxBodyBytes()));
    r.get("/metrics").handler(ctx -> ctx.response().putHeader("content-type",
        "text/plain; version=0.0.4; charset=utf-8").end(factory.metrics().scrape()));
    r.route("/api/v1/*").handler(this::authenticate);
    r.route("/api/v1/transactions*").handler(ctx -> requireRole(ctx, "client"));
    r.route("/api/v1/pipelines*").handler(ctx -> requireRole(ctx, "admin"));
    r.route("/api/v1/cluster").handler(ctx -> requireRole(ctx, "admin"));
    r.route("/api/v1/stats").handler(ctx -> requireRole(ctx, "admin"));
    r.route("/api/v1/admin/*").handler(ctx -> requireRole(ctx, "admin"));
    r.get("/api/v1/pipelines").handler(ctx -> json(ctx, pipelines.pipelines()));
    r.get("/api/v1/pipelines/:name").handler(ctx -> json(ctx, pipelines.pipelines().compose(all ->
        all.containsKey(ctx.pathParam("name")) ? Future.succeededFuture(all.getJsonObject(ctx.pathParam("name")))
            : Future.failedFuture(new TxException(Kind.NOT_FOUND, "no pipeline " + ctx.pathParam("name"), null,
                null)))));
    r.put("/api/v1/pipelines/:name").handler(ctx -> json(ctx, body(ctx).compose(b -> upload(ctx, b))));
    r.get("/api/v1/cluster").handler(ctx -> json(ctx, cluster()));
    r.get("/api/v1/stats").handler(ctx -> json(ctx, Stats.read(new StatsStore(redis), redis.clock(),
        ctx.request().params())));
    r.post("/api/v1/transactions").handler(ctx -> answer(ctx, body(ctx).compose(b -> withinRate(ctx)
        .compose(v -> tx.start(b.put("owner", owner(ctx))))).compose(s -> awaitOutcome(ctx, s)),
        s -> s.status().isFinal() ? 200 : 202));
    r.get("/api/v1/transactions").handler(ctx -> answer(ctx,
        tx.byExternalId(ctx.request().getParam("externalId"), owner(ctx)), s -> 200));
    r.get("/api/v1/transactions/:txId").handler(ctx -> answer(ctx, tx.status(ctx.pathParam("txId"), owner(ctx))
        .compose(s -> awaitOutcome(ctx, s)), s -> 200));
    r.post("/api/v1/transactions/:txId/cancel").handler(ctx -> answer(ctx,
        tx.cancel(ctx.pathParam("txId"), owner(ctx)), s -> 200));
    r.put("/api/v1/transactions/:txId/switches/:name").handler(ctx -> answer(ctx, body(ctx).compose(b ->
        tx.setSwitch(ctx.pathParam("txId"), owner(ctx), ctx.pathParam("name"), b.getValue("value"))), s -> 200));
    AdminApi admin = new AdminApi(tx, reads, new ControlStore(redis), pipelines, factory.archive());
    r.get("/api/v1/admin/transactions").handler(ctx -> json(ctx, admin.list(ctx.request().getParam("list"),
        ctx.request().getParam("limit"))));
    r.get("/api/v1/admin/transactions/:txId").handler(ctx -> json(ctx, admin.detail(ctx.pathParam("txId"))));
    r.post("/api/v1/admin/transactions/:txId/cancel").handler(ctx -> answer(ctx, admin.cancel(ctx.pathParam("txId")),
        s -> 200));
    r.post("/api/v1/admin/transactions/:txId/wake").handler(ctx -> answer(ctx, admin.wake(ctx.pathParam("txId")),
        s -> 200));
    r.put("/api/v1/admin/transactions/:txId/switches/:name").handler(ctx -> answer(ctx, body(ctx).compose(b ->
        admin.setSwitch(ctx.pathParam("txId"), ctx.pathParam("name"), b.getValue("value"))), s -> 200));
    // the dashboard: static files from the jar; its API calls carry the admin key the page keeps
    r.get("/dashboard").handler(ctx -> {
      if (ctx.request().path().endsWith("/")) {
        ctx.next(); // the router matches /dashboard/ here too; the static files answer it
      } else {
        ctx.redirect("/dashboard/");
      }
    });
    r.route("/dashboard/*").handler(io.vertx.ext.web.handler.StaticHandler.create("dashboard")
        .setCachingEnabled(false));
    // no route matched (or not with this method): a problem, like every other refusal
    r.route().last().handler(ctx -> problem(ctx, new TxException(Kind.NOT_FOUND, "no route "
        + ctx.request().method() + " " + ctx.normalizedPath(), null, null)));
    r.route().failureHandler(this::failure);
    return r;
  }

  /** Each readiness check as {check, result}: "ok", or what is wrong. A failing check never fails the list. */
  private Future<java.util.List<JsonObject>> ready() {
    int scripts = redis.scripts().all().size();
    java.util.List<Future<JsonObject>> checks = java.util.List.of(
        check("redis", reads.ping().map(v -> "ok")),
        // a Redis that restarted has lost its script cache: load them now rather than report it for minutes
        check("scripts", reads.scriptsLoaded().compose(n -> n == scripts ? Future.succeededFuture("ok")
            : redis.scripts().loadAll(redis.link()).map(v -> "ok (" + (scripts - n) + " loaded again)"))),
        check("cluster", Future.succeededFuture(clusterJoined.getAsBoolean() ? "ok" : "not joined")),
        // the archive answers reads of finished transactions: a node that cannot reach it is not ready
        check("archive", factory.archive() == null ? Future.succeededFuture("ok")
            : factory.archive().find("tx-" + "0".repeat(32)).map(none -> "ok")
                .timeout(2, java.util.concurrent.TimeUnit.SECONDS)),
        check("pipelines", pipelines.pipelines().map(all -> {
          java.util.List<String> missing = pipelineFiles.stream().filter(n -> !all.containsKey(n)).toList();
          return missing.isEmpty() ? "ok" : "not uploaded: " + missing;
        })));
    return Future.join(checks).transform(ar -> Future.succeededFuture(checks.stream()
        .map(f -> f.succeeded() ? f.result() : new JsonObject().put("result", "failed")).toList()));
  }

  private static Future<JsonObject> check(String name, Future<String> result) {
    return result.recover(e -> Future.succeededFuture(String.valueOf(e.getMessage())))
        .map(r -> new JsonObject().put("check", name).put("result", r));
  }

  private void authenticate(RoutingContext ctx) {
    String header = ctx.request().getHeader("Authorization");
    String key = header != null && header.startsWith("Bearer ") ? header.substring(7).trim() : null;
    ApiKeys.Principal who = keys.authenticate(key).orElse(null);
    if (who == null) {
      problem(ctx, new TxException(Kind.UNAUTHORIZED, "send Authorization: Bearer <API key>", null, null));
    } else {
      ctx.put(OWNER, who.owner());
      ctx.put("conveyor.principal", who);
      ctx.next();
    }
  }

  private static void requireRole(RoutingContext ctx, String role) {
    ApiKeys.Principal who = ctx.get("conveyor.principal");
    if (who.has(role)) {
      ctx.next();
    } else {
      problem(ctx, new TxException(Kind.FORBIDDEN, "this key has no " + role + " role", null, null));
    }
  }

  /** A pipeline uploaded by an admin: checked like a file (its name must be the path's), then published. */
  private Future<JsonObject> upload(RoutingContext ctx, JsonObject definition) {
    String name = ctx.pathParam("name");
    if (!name.equals(definition.getValue("name"))) {
      return Future.failedFuture(TxException.invalid("name", "the body's name must be " + name));
    }
    io.conveyor.pipeline.CompiledPipeline p;
    try {
      p = factory.catalog().parser().parse(definition, "upload of " + name);
    } catch (io.conveyor.pipeline.PipelineException e) {
      return Future.failedFuture(TxException.invalid("definition", e.getMessage()));
    }
    return factory.catalog().publish(pipelines, p).map(c -> new JsonObject().put("name", name)
        .put("version", c.version()).put("nodeGroup", c.pipeline().nodeGroup()));
  }

  /**
   * The nodes with their heartbeat, the queues of every group they serve, and each role's leader: a lease
   * holder whose heartbeat is gone is shown as no leader (null), never as a dead node leading.
   */
  private Future<JsonObject> cluster() {
    LivenessStore liveness = new LivenessStore(redis);
    StatsStore stats = new StatsStore(redis);
    return Future.all(liveness.nodes(), liveness.leader(LeaderRole.REAPER), liveness.leader(LeaderRole.ARCHIVE),
        liveness.leader(LeaderRole.WEBHOOKS)).compose(f -> {
      java.util.Map<String, JsonObject> nodes = f.resultAt(0);
      java.util.Set<String> groups = new java.util.TreeSet<>();
      nodes.values().forEach(n -> groups.add(n.getString("group")));
      java.util.List<Future<JsonObject>> lengths = groups.stream().map(stats::queueLengths).toList();
      return Future.all(lengths).map(q -> {
        JsonObject queues = new JsonObject();
        int i = 0;
        for (String g : groups) {
          queues.put(g, q.<JsonObject>resultAt(i++));
        }
        return new JsonObject().put("now", java.time.Instant.ofEpochMilli(redis.clock().millis()).toString())
            .put("nodes", new JsonObject(new java.util.LinkedHashMap<>(nodes)))
            .put("queues", queues).put("leaders", new JsonObject().put("reaper", alive(nodes, f.resultAt(1)))
                .put("archive", alive(nodes, f.resultAt(2))).put("webhooks", alive(nodes, f.resultAt(3))));
      });
    });
  }

  private static String alive(java.util.Map<String, JsonObject> nodes, String leader) {
    return leader != null && nodes.containsKey(leader) ? leader : null;
  }

  private static void json(RoutingContext ctx, Future<JsonObject> result) {
    result.onSuccess(j -> ctx.response().putHeader("content-type", "application/json").end(j.encode()))
        .onFailure(e -> problem(ctx, e));
  }

  /** An owner's starts are limited by a token bucket kept in Redis (http.startRate per second, startBurst). */
  private Future<Void> withinRate(RoutingContext ctx) {
    String owner = owner(ctx);
    return queue.takeStartToken(owner, http.startRate(owner), http.startBurst(owner))
        .compose(waitMs -> {
          if (waitMs == 0) {
            return Future.succeededFuture();
          }
          ctx.response().putHeader("Retry-After", Long.toString((waitMs + 999) / 1000));
          return Future.failedFuture(new TxException(Kind.RATE_LIMITED, "owner " + owner(ctx)
              + " starts more than " + http.startRate(owner) + " transactions a second; retry in "
              + waitMs + " ms", null, null));
        });
  }

  private static String owner(RoutingContext ctx) {
    return ctx.get(OWNER);
  }

  private static Future<JsonObject> body(RoutingContext ctx) {
    String type = ctx.request().getHeader("content-type");
    if (type == null || !type.toLowerCase().startsWith("application/json")) {
      return Future.failedFuture(new TxException(Kind.UNSUPPORTED_MEDIA_TYPE,
          "send the body as application/json", null, null));
    }
    try {
      Object v = Json.decodeValue(ctx.body().buffer() == null ? "" : ctx.body().asString());
      return v instanceof JsonObject o ? Future.succeededFuture(o)
          : Future.failedFuture(TxException.invalid("body", "expected a JSON object"));
    } catch (DecodeException e) {
      return Future.failedFuture(TxException.invalid("body", "not JSON: " + e.getMessage().lines().findFirst()
          .orElse("")));
    }
  }

  /**
   * With ?wait=N, holds the answer until the transaction ends or N seconds pass. It listens before it
   * looks again, so a completion between the first read and the listening is not missed.
   */
  private Future<TxSummary> awaitOutcome(RoutingContext ctx, TxSummary now) {
    long waitMs = waitMillis(ctx);
    if (waitMs <= 0) {
      return Future.succeededFuture(now);
    }
    if (now.status().isFinal()) {
      return tx.pollAnswered(now);
    }
    Promise<Void> ended = Promise.promise();
    // only this node listens: the Redis notify channel reaches every node, so nothing need cross the cluster
    MessageConsumer<JsonObject> c = vertx.eventBus().localConsumer(Addresses.completedFor(now.owner()), m -> {
      if (now.txId().equals(m.body().getString("txId"))) {
        ended.tryComplete();
      }
    });
    long timer = vertx.setTimer(waitMs, t -> ended.tryComplete());
    return c.completion().compose(v -> tx.status(now.txId(), now.owner())).compose(again -> again.status().isFinal()
        ? Future.succeededFuture(again)
        : ended.future().compose(v -> tx.status(now.txId(), now.owner())))
        .compose(tx::pollAnswered)
        .eventually(() -> {
          vertx.cancelTimer(timer);
          return c.unregister();
        });
  }

  private long waitMillis(RoutingContext ctx) {
    String w = ctx.request().getParam("wait");
    if (w == null) {
      return 0;
    }
    try {
      return Math.min(Math.max(0, Long.parseLong(w)) * 1000, http.maxWait().toMillis());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private void answer(RoutingContext ctx, Future<TxSummary> result, Function<TxSummary, Integer> status) {
    result.onSuccess(s -> ctx.response().setStatusCode(status.apply(s)).putHeader("content-type", "application/json")
        .end(s.toJson().encode())).onFailure(e -> problem(ctx, e));
  }

  private void failure(RoutingContext ctx) {
    int code = ctx.statusCode();
    if (code == 413) {
      problem(ctx, new TxException(Kind.TOO_LARGE, "the body is over " + http.maxBodyBytes()
          + " bytes", "body", null));
    } else if (ctx.failure() != null) {
      problem(ctx, ctx.failure());
    } else {
      problem(ctx, new TxException(code == 404 ? Kind.NOT_FOUND : Kind.INVALID_INPUT, "no such route", null, null));
    }
  }

  /** application/problem+json with a stable type per kind (see Problems for what is 503 and what 500). */
  static void problem(RoutingContext ctx, Throwable e) {
    TxException t = Problems.of(e, ctx.request().method() + " " + ctx.normalizedPath());
    if (ctx.response().ended()) {
      return;
    }
    JsonObject p = t.toJson().put("title", t.kind().type);
    ctx.response().setStatusCode(t.kind().status).putHeader("content-type", "application/problem+json")
        .end(p.encode());
  }

  @Override
  public Future<?> stop() {
    return server.close().eventually(tx::close);
  }
}
