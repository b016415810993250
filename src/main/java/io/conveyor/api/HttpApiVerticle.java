package io.conveyor.api;

import io.conveyor.bus.Addresses;
import io.conveyor.config.Config;
import io.conveyor.domain.Search;
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
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(HttpApiVerticle.class);
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
  private ArchiveAdmin archiveAdmin;

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

  /**
   * The SockJS event-bus bridge (for web pages: @vertx/eventbus-bridge-client.js), under the TCP bridge's
   * rules (BridgeRules). A refusal is answered here with an err frame the client's reply or message handler
   * gets ({failureCode 403, message "access_denied: address: reason"}); its event is then left open, so
   * the bridge adds no unspecific "rejected" of its own.
   */
  private Router sockJsBridge() {
    BridgeRules rules = new BridgeRules(config.bridge(), config.api().keys());
    return io.vertx.ext.web.handler.sockjs.SockJSHandler.create(vertx).bridge(
        rules.permit(new io.vertx.ext.web.handler.sockjs.SockJSBridgeOptions()), event -> rules.decide(event,
            (address, refused) -> {
              log.debug("SockJS bridge: refused a {} for {}: {}", event.type(), address, refused);
              Object reply = event.getRawMessage().getValue("replyAddress");
              event.socket().write(new JsonObject().put("type", "err")
                  .put("address", reply instanceof String r ? r : address).put("sourceAddress", address)
                  .put("failureCode", 403).put("failureType", "RECIPIENT_FAILURE")
                  .put("message", "access_denied: " + address + ": " + refused).toBuffer());
            }));
  }

  /** Every route the API serves; a test holds it against docs/openapi.yaml. */
  public Router router() {
    Router r = Router.router(vertx);
    r.get("/health/live").handler(ctx -> ctx.json(new JsonObject().put("status", "up")));
    r.get("/health/ready").handler(ctx -> ready().onSuccess(checks -> {
      // an archive that lags, or a Redis too full for new starts, is a warning, not a reason to take every node
      // out of service: all of them share both, and reads, cancels and running work still need a node
      boolean ok = checks.stream().allMatch(c -> "ok".equals(c.getString("result"))
          || c.getString("result").startsWith("lagging") || c.getString("result").startsWith("full"));
      JsonObject body = new JsonObject().put("status", ok ? "ready" : "not ready");
      checks.forEach(c -> body.put(c.getString("check"), c.getString("result")));
      ctx.response().setStatusCode(ok ? 200 : 503).putHeader("content-type", "application/json").end(body.encode());
    }));
    if (config.bridge().sockjs()) {
      // SockJS's XHR transports post their frames
      r.route("/eventbus/*").handler(BodyHandler.create(false).setBodyLimit(http.maxBodyBytes()));
      r.route("/eventbus/*").subRouter(sockJsBridge());
    }
    r.route("/api/v1/*").handler(BodyHandler.create(false).setBodyLimit(http.maxBodyBytes()));
    archiveAdmin = new ArchiveAdmin(new io.conveyor.redis.QuarantineStore(redis), config.archive().lagWarning(),
        factory.metrics());
    archiveAdmin.mountLagGauge(r);
    // the node's group's limits and fair-share waits are read from Redis for each scrape (a few reads)
    ControlStore limitsView = new ControlStore(redis);
    r.get("/metrics").handler(ctx -> limitsView.waiting(config.node().group()).onComplete(ar -> {
      if (ar.succeeded()) {
        factory.metrics().limits(config.node().group(), ar.result());
      }
      ctx.response().putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8")
          .end(factory.metrics().scrape());
    }));
    r.route("/api/v1/*").handler(this::authenticate);
    r.route("/api/v1/*").handler(HttpApiVerticle::knownQuery);
    r.route("/api/v1/transactions*").handler(ctx -> requireRole(ctx, "client"));
    // a bad ?wait is refused before anything is done (a start must not happen and then answer 400)
    r.route("/api/v1/transactions*").handler(ctx -> {
      try {
        waitMillis(ctx);
        ctx.next();
      } catch (TxException e) {
        problem(ctx, e);
      }
    });
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
    PipelineAdmin lifecycle = new PipelineAdmin(pipelines, reads);
    r.post("/api/v1/pipelines/:name/disable").handler(ctx -> json(ctx, lifecycle.setDisabled(ctx.pathParam("name"),
        true)));
    r.post("/api/v1/pipelines/:name/enable").handler(ctx -> json(ctx, lifecycle.setDisabled(ctx.pathParam("name"),
        false)));
    r.delete("/api/v1/pipelines/:name").handler(ctx -> json(ctx, lifecycle.delete(ctx.pathParam("name"),
        "true".equals(ctx.request().getParam("force")))));
    r.get("/api/v1/cluster").handler(ctx -> json(ctx, cluster()));
    r.get("/api/v1/stats").handler(ctx -> json(ctx, Stats.read(new StatsStore(redis), redis.clock(),
        ctx.request().params())));
    // a full Redis refuses before the rate token is written
    r.post("/api/v1/transactions").handler(ctx -> answer(ctx, body(ctx).compose(b -> Edge.ownedBy(b, owner(ctx)))
        .compose(b -> tx.admitsStarts().compose(v -> withinRate(ctx))
        .compose(v -> tx.start(b.put("owner", owner(ctx)), ctx.request().getHeader("traceparent"))))
        .compose(s -> awaitOutcome(ctx, s)),
        s -> s.status().isFinal() ? 200 : 202));
    Search search = new Search(reads, redis.keys(), factory.archive());
    // ?externalId=… alone is the lookup it always was (one transaction, or 404); any other query is a search
    r.get("/api/v1/transactions").handler(ctx -> {
      java.util.Map<String, String> params = params(ctx);
      if (params.size() == 1 && params.containsKey("externalId")) {
        answer(ctx, tx.byExternalId(params.get("externalId"), owner(ctx)), s -> 200);
      } else {
        json(ctx, searched(search, params, owner(ctx)));
      }
    });
    r.get("/api/v1/transactions/:txId").handler(ctx -> answer(ctx, tx.status(ctx.pathParam("txId"), owner(ctx))
        .compose(s -> awaitOutcome(ctx, s)), s -> 200));
    r.post("/api/v1/transactions/:txId/cancel").handler(ctx -> cancelled(ctx,
        tx.cancelTree(ctx.pathParam("txId"), owner(ctx))));
    r.post("/api/v1/transactions/:txId/retry").handler(ctx -> answer(ctx, fromStart(ctx).compose(start ->
        tx.rerun(ctx.pathParam("txId"), owner(ctx), start)), s -> 200));
    r.put("/api/v1/transactions/:txId/switches/:name").handler(ctx -> answer(ctx, body(ctx, "value").compose(b ->
        tx.setSwitch(ctx.pathParam("txId"), owner(ctx), ctx.pathParam("name"), b.getValue("value"))), s -> 200));
    AdminApi admin = new AdminApi(tx, reads, new ControlStore(redis), pipelines, factory.archive());
    // ?list=… is the dashboard's fixed lists; otherwise a search across owners
    r.get("/api/v1/admin/transactions").handler(ctx -> {
      java.util.Map<String, String> params = params(ctx);
      if (params.containsKey("list")) {
        json(ctx, admin.list(params.get("list"), params.get("limit")));
      } else {
        json(ctx, searched(search, params, null));
      }
    });
    r.get("/api/v1/admin/transactions/:txId").handler(ctx -> json(ctx, admin.detail(ctx.pathParam("txId"))));
    r.post("/api/v1/admin/transactions/:txId/cancel").handler(ctx -> cancelled(ctx,
        admin.cancelTree(ctx.pathParam("txId"))));
    r.post("/api/v1/admin/transactions/:txId/retry").handler(ctx -> answer(ctx, fromStart(ctx).compose(start ->
        admin.rerun(ctx.pathParam("txId"), start)), s -> 200));
    BulkRetry bulk = new BulkRetry(admin::rerun, reads, factory.archive(), config.archive().delay().toMillis(),
        redis.clock());
    r.post("/api/v1/admin/pipelines/:name/retry").handler(ctx -> json(ctx, bulk.run(ctx.pathParam("name"),
        ctx.request().params())));
    r.post("/api/v1/admin/transactions/:txId/wake").handler(ctx -> answer(ctx, admin.wake(ctx.pathParam("txId")),
        s -> 200));
    r.put("/api/v1/admin/transactions/:txId/switches/:name").handler(ctx -> answer(ctx, body(ctx, "value").compose(b ->
        admin.setSwitch(ctx.pathParam("txId"), ctx.pathParam("name"), b.getValue("value"))), s -> 200));
    ScheduleAdmin schedules = new ScheduleAdmin(new io.conveyor.redis.ScheduleStore(redis), tx, redis.clock());
    r.get("/api/v1/admin/schedules").handler(ctx -> json(ctx, schedules.list()));
    r.get("/api/v1/admin/schedules/:id").handler(ctx -> json(ctx, schedules.get(ctx.pathParam("id"))));
    r.put("/api/v1/admin/schedules/:id").handler(ctx -> json(ctx, body(ctx).compose(b ->
        schedules.put(ctx.pathParam("id"), b))));
    r.delete("/api/v1/admin/schedules/:id").handler(ctx -> json(ctx, schedules.delete(ctx.pathParam("id"))));
    r.post("/api/v1/admin/schedules/:id/pause").handler(ctx -> json(ctx, schedules.setPaused(ctx.pathParam("id"),
        true, owner(ctx))));
    r.post("/api/v1/admin/schedules/:id/resume").handler(ctx -> json(ctx, schedules.setPaused(ctx.pathParam("id"),
        false, owner(ctx))));
    r.post("/api/v1/admin/schedules/:id/trigger").handler(ctx -> json(ctx, schedules.trigger(ctx.pathParam("id"))));
    GroupAdmin groups = new GroupAdmin(vertx, new ControlStore(redis), Edge.groupKnown(new LivenessStore(redis),
        pipelines));
    r.get("/api/v1/admin/groups/:group").handler(ctx -> json(ctx, groups.act(ctx.pathParam("group"), "read",
        owner(ctx), null)));
    for (String action : java.util.List.of("pause", "drain", "resume")) {
      r.post("/api/v1/admin/groups/:group/" + action).handler(ctx -> json(ctx, groups.act(ctx.pathParam("group"),
          action, owner(ctx), action.equals("drain") ? ctx.request().getParam("wait") : null)));
    }
    io.conveyor.redis.EventStore eventStore = new io.conveyor.redis.EventStore(redis);
    r.get("/api/v1/admin/events").handler(ctx -> {
      java.util.Map<String, String> p = params(ctx);
      try {
        json(ctx, eventStore.read(eventFilter(p)).map(list -> new JsonObject().put("events", list)));
      } catch (TxException e) {
        problem(ctx, e);
      }
    });
    OwnerAdmin owners = new OwnerAdmin(new io.conveyor.redis.OwnerStore(redis), config.transactions(), config.limits());
    r.get("/api/v1/admin/owners").handler(ctx -> json(ctx, owners.list()));
    r.get("/api/v1/admin/owners/:owner").handler(ctx -> json(ctx, owners.get(ctx.pathParam("owner"))));
    r.put("/api/v1/admin/owners/:owner").handler(ctx -> json(ctx, body(ctx).compose(b ->
        owners.put(ctx.pathParam("owner"), b))));
    r.delete("/api/v1/admin/owners/:owner").handler(ctx -> json(ctx, owners.delete(ctx.pathParam("owner"))));
    archiveAdmin.mount(r);
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
        // above redis.memoryHighWater Redis answers, but takes no starts: "full", and redisMemory says why
        check("redis", reads.ping().map(v -> tx.memory().fullest() == null ? "ok" : "full")),
        check("redisMemory", Future.succeededFuture(RedisMemoryView.readiness(tx.memory(), config.redis().memory()))),
        check("scripts", scriptsReady(scripts)),
        check("cluster", Future.succeededFuture(clusterJoined.getAsBoolean() ? "ok" : "not joined")),
        // the archive answers reads of finished transactions: a node that cannot reach it is not ready
        check("archive", archiveAdmin.readiness(factory.archive() == null ? Future.succeededFuture("ok")
            : factory.archive().find("tx-" + "0".repeat(32)).map(none -> "ok")
                .timeout(2, java.util.concurrent.TimeUnit.SECONDS))),
        check("pipelines", pipelines.pipelines().map(all -> {
          java.util.List<String> missing = pipelineFiles.stream().filter(n -> !all.containsKey(n)).toList();
          return missing.isEmpty() ? "ok" : "not uploaded: " + missing;
        })));
    return Future.join(checks).transform(ar -> Future.succeededFuture(checks.stream()
        .map(f -> f.succeeded() ? f.result() : new JsonObject().put("result", "failed")).toList()));
  }

  /**
   * A Redis that restarted has lost its script cache: the scripts are loaded now rather than reported
   * missing for minutes (and that is logged; the check is ok once they are loaded). A Redis Cluster keeps a
   * cache per server and the client sends a keyless SCRIPT command to any one of them, replicas included,
   * so there it says nothing: each master is given a script's source on its first use (NOSCRIPT, then EVAL).
   */
  private Future<String> scriptsReady(int scripts) {
    if (config.redis().mode() == io.conveyor.config.Config.RedisMode.CLUSTER) {
      return Future.succeededFuture("ok");
    }
    return reads.scriptsLoaded().compose(n -> n == scripts ? Future.succeededFuture("ok")
        : redis.scripts().loadAll(redis.link()).map(v -> {
          log.info("readiness: {} of {} Lua scripts were missing in Redis (it restarted?); loaded again",
              scripts - n, scripts);
          return "ok";
        }));
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

  /** The query parameters, each once (a repeated one is refused rather than one of its values dropped). */
  private static java.util.Map<String, String> params(RoutingContext ctx) {
    java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
    for (String name : ctx.queryParams().names()) {
      java.util.List<String> all = ctx.queryParams().getAll(name);
      out.put(name, all.size() == 1 ? all.get(0) : null);
    }
    return out;
  }

  /** GET /api/v1/admin/events: kind, node, subject, since and until (ISO-8601 or ms), limit (1-1000, default 100). */
  private static io.conveyor.redis.EventStore.Filter eventFilter(java.util.Map<String, String> p) {
    for (java.util.Map.Entry<String, String> e : p.entrySet()) {
      if (e.getValue() == null || e.getValue().isBlank()) {
        throw TxException.invalid(e.getKey(), e.getValue() == null ? "given more than once" : "empty: leave it out");
      }
    }
    return new io.conveyor.redis.EventStore.Filter(p.get("kind"), p.get("node"), p.get("subject"),
        Search.time(p, "since"), Search.time(p, "until"), Search.limit(p, 100, io.conveyor.redis.EventStore.MAX_LENGTH));
  }

  private static Future<JsonObject> searched(Search search, java.util.Map<String, String> params, String owner) {
    for (java.util.Map.Entry<String, String> e : params.entrySet()) {
      if (e.getValue() == null) {
        return Future.failedFuture(TxException.invalid(e.getKey(), "given more than once"));
      }
    }
    try {
      return search.run(Search.parse(params, owner));
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
  }

  /** The query parameters each route takes (method, path pattern); a route not listed takes none. */
  private static final List<java.util.Map.Entry<java.util.regex.Pattern, java.util.Set<String>>> QUERIES = List.of(
      query("GET /api/v1/transactions", "externalId", "status", "pipeline", "owner", "from", "to", "q", "limit",
          "cursor"),
      query("POST /api/v1/transactions", "wait"),
      query("GET /api/v1/transactions/[^/]+", "wait"),
      query("POST /api/v1/(admin/)?transactions/[^/]+/retry", "from"),
      query("DELETE /api/v1/pipelines/[^/]+", "force"),
      query("GET /api/v1/stats", "series", "from", "to", "pipeline", "group", "owner"),
      query("GET /api/v1/admin/events", "kind", "node", "subject", "since", "until", "limit"),
      query("GET /api/v1/admin/transactions", "list", "limit", "externalId", "status", "pipeline", "owner", "from",
          "to", "q", "cursor"),
      query("POST /api/v1/admin/pipelines/[^/]+/retry", "since", "until", "status", "from", "limit"),
      query("POST /api/v1/admin/groups/[^/]+/drain", "wait"),
      query("GET /api/v1/admin/archive/quarantine", "cursor", "limit"));

  private static java.util.Map.Entry<java.util.regex.Pattern, java.util.Set<String>> query(String route,
                                                                                          String... params) {
    return java.util.Map.entry(java.util.regex.Pattern.compile(route), java.util.Set.of(params));
  }

  /**
   * Refuses a query parameter the route does not take (a misspelt one must not be ignored), and a force that is
   * not true or false; each route checks the type of the ones it takes.
   */
  private static void knownQuery(RoutingContext ctx) {
    io.vertx.core.MultiMap params = ctx.queryParams();
    if (params.isEmpty()) {
      ctx.next();
      return;
    }
    String route = ctx.request().method().name() + " " + ctx.normalizedPath();
    java.util.Set<String> accepted = QUERIES.stream().filter(e -> e.getKey().matcher(route).matches())
        .map(java.util.Map.Entry::getValue).findFirst().orElse(java.util.Set.of());
    for (String name : params.names()) {
      if (!accepted.contains(name)) {
        problem(ctx, TxException.invalid(name, "unknown query parameter" + io.conveyor.config.Names.suggestion(name,
            accepted) + (accepted.isEmpty() ? "; this route takes none"
            : "; accepted: " + String.join(", ", new java.util.TreeSet<>(accepted)))));
        return;
      }
      if (params.getAll(name).size() > 1) {
        problem(ctx, TxException.invalid(name, "given more than once"));
        return;
      }
    }
    String force = params.get("force");
    if (force != null && !force.equals("true") && !force.equals("false")) {
      problem(ctx, TxException.invalid("force", "expected true or false, got " + force));
      return;
    }
    ctx.next();
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
    // an upload is the newest publication (its time is now); kept is set only if a clock ran ahead elsewhere
    String group = p.pipeline().nodeGroup();
    return factory.catalog().publish(pipelines, p, redis.clock().millis()).compose(published ->
        Future.all(new LivenessStore(redis).nodes(), pipelines.pipelines()).map(f -> {
          java.util.Map<String, JsonObject> nodes = f.resultAt(0);
          JsonObject known = f.resultAt(1);
          JsonObject reply = new JsonObject().put("name", name).put("version", p.version()).put("nodeGroup", group);
          java.util.List<String> warnings = new java.util.ArrayList<>();
          if (nodes.values().stream().noneMatch(n -> group.equals(n.getString("group")))) {
            warnings.add("no live node serves group " + group + ": its transactions stay queued until one"
                + " starts with node.group " + group);
          }
          java.util.List<String> missing = p.pipeline().references().stream()
              .filter(ref -> !known.containsKey(ref) && !ref.equals(name)).toList();
          if (!missing.isEmpty()) {
            warnings.add("it names pipelines not published yet: " + String.join(", ", missing) + " (accepted, as "
                + "pipelines may be published in any order; a step that reaches one fails internal-error until it is)");
          }
          String cycle = io.conveyor.pipeline.ChildCycles.through(name, io.conveyor.pipeline.ChildCycles.graph(known));
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

  /**
   * Per limit of a group that holds work back or counts runs (a pipeline's name, or '@' and an owner's):
   * {running, held, maxConcurrency, rateLimit}, the last two as set (null when not).
   */
  private static JsonObject limits(JsonObject waiting, JsonObject pipelines, JsonObject owners) {
    java.util.TreeSet<String> names = new java.util.TreeSet<>(waiting.getJsonObject("held").fieldNames());
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
   * partitions, leaders.reaper is the judge of dead nodes, and partitions lists each partition's leaders.
   */
  private Future<JsonObject> cluster() {
    LivenessStore liveness = new LivenessStore(redis);
    StatsStore stats = new StatsStore(redis);
    int parts = redis.keys().partitions();
    java.util.List<Future<?>> reads = new java.util.ArrayList<>(java.util.List.of(liveness.nodes(),
        liveness.leader(LeaderRole.REAPER, -1)));
    for (int p = 0; p < parts; p++) {
      reads.add(liveness.leader(LeaderRole.REAPER, p));
      reads.add(liveness.leader(LeaderRole.ARCHIVE, p));
      reads.add(liveness.leader(LeaderRole.WEBHOOKS, p));
    }
    reads.add(new io.conveyor.redis.OwnerStore(redis).list());
    reads.add(pipelines.pipelines());
    ControlStore control = new ControlStore(redis);
    return Future.all(reads).compose(f -> {
      JsonObject ownerLimits = f.resultAt(reads.size() - 2);
      java.util.Map<String, JsonObject> nodes = f.resultAt(0);
      java.util.Set<String> groups = new java.util.TreeSet<>();
      nodes.values().forEach(n -> groups.add(n.getString("group")));
      // groups only pipelines name count too: work queued there waits for a node that may never come
      JsonObject known = f.resultAt(reads.size() - 1);
      known.forEach(e -> {
        String g = ((JsonObject) e.getValue()).getString("nodeGroup");
        if (g != null) {
          groups.add(g);
        }
      });
      java.util.List<Future<?>> per = new java.util.ArrayList<>();
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
        JsonObject out = new JsonObject().put("now", java.time.Instant.ofEpochMilli(redis.clock().millis()).toString())
            .put("nodes", new JsonObject(new java.util.LinkedHashMap<>(nodes)))
            .put("queues", queues).put("limits", Edge.limits(config)).put("leaders", new JsonObject().put("reaper", alive(nodes, f.resultAt(1)))
                .put("archive", alive(nodes, f.resultAt(3))).put("webhooks", alive(nodes, f.resultAt(4))));
        if (parts > 1) {
          io.vertx.core.json.JsonArray each = new io.vertx.core.json.JsonArray();
          for (int p = 0; p < parts; p++) {
            each.add(new JsonObject().put("partition", p).put("reaper", alive(nodes, f.resultAt(2 + 3 * p)))
                .put("archive", alive(nodes, f.resultAt(3 + 3 * p))).put("webhooks", alive(nodes, f.resultAt(4 + 3 * p))));
          }
          out.put("partitions", each);
        }
        return out;
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

  /** A retry's from: absent or failed (the step that failed), or start; anything else is refused. */
  private static Future<Boolean> fromStart(RoutingContext ctx) {
    String from = ctx.request().getParam("from", "failed");
    return switch (from) {
      case "failed" -> Future.succeededFuture(false);
      case "start" -> Future.succeededFuture(true);
      default -> Future.failedFuture(TxException.invalid("from", "expected failed (the default) or start, got "
          + from));
    };
  }

  /** The body, holding no field but these. */
  private static Future<JsonObject> body(RoutingContext ctx, String... accepted) {
    return body(ctx).compose(b -> io.conveyor.model.Strict.only(b, accepted));
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

  /** ?wait=N (whole seconds, at most http.maxWait): absent is 0; anything else is refused. */
  private long waitMillis(RoutingContext ctx) {
    String w = ctx.request().getParam("wait");
    if (w == null) {
      return 0;
    }
    long seconds;
    try {
      seconds = Long.parseLong(w);
    } catch (NumberFormatException e) {
      seconds = -1;
    }
    if (seconds < 0 || seconds > http.maxWait().toSeconds()) {
      throw TxException.invalid("wait", "expected whole seconds from 0 to " + http.maxWait().toSeconds()
          + " (http.maxWait), got " + w + "; poll again for longer");
    }
    return seconds * 1000;
  }

  private void answer(RoutingContext ctx, Future<TxSummary> result, Function<TxSummary, Integer> status) {
    result.onSuccess(s -> ctx.response().setStatusCode(status.apply(s)).putHeader("content-type", "application/json")
        .end(s.toJson().encode())).onFailure(e -> problem(ctx, e));
  }

  /** A cancel's answer: 200 when its tree is cancelled, 202 with cancelPending while the walk goes on. */
  private void cancelled(RoutingContext ctx, Future<io.conveyor.domain.Transactions.Cancelled> result) {
    result.onSuccess(c -> ctx.response().setStatusCode(c.pending() == 0 ? 200 : 202)
        .putHeader("content-type", "application/json")
        .end((c.pending() == 0 ? c.summary().toJson() : c.summary().toJson().put("cancelPending", c.pending()))
            .encode())).onFailure(e -> problem(ctx, e));
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
    if (t.kind() == Kind.LIVE_LIMIT) {
      ctx.response().putHeader("Retry-After", Edge.LIVE_LIMIT_RETRY_AFTER); // when some end is unknown: a short wait
    } else if (t.retryAfter() > 0) {
      ctx.response().putHeader("Retry-After", Integer.toString(t.retryAfter()));
    }
    ctx.response().setStatusCode(t.kind().status).putHeader("content-type", "application/problem+json")
        .end(p.encode());
  }

  @Override
  public Future<?> stop() {
    return server.close().eventually(tx::close);
  }
}
