package io.conveyor.api;

import static io.conveyor.api.HttpIo.answer;
import static io.conveyor.api.HttpIo.body;
import static io.conveyor.api.HttpIo.cancelled;
import static io.conveyor.api.HttpIo.fromStart;
import static io.conveyor.api.HttpIo.json;
import static io.conveyor.api.HttpIo.owner;
import static io.conveyor.api.HttpIo.params;
import static io.conveyor.api.HttpIo.problem;
import static io.conveyor.api.HttpIo.searched;

import io.conveyor.config.Config;
import io.conveyor.database.ArchiveStore;
import io.conveyor.domain.Migrations;
import io.conveyor.domain.Search;
import io.conveyor.domain.Transactions;
import io.conveyor.model.TxException;
import io.conveyor.redis.ControlStore;
import io.conveyor.redis.EventStore;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.MigrateStore;
import io.conveyor.redis.OwnerStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.ReadStore;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import java.util.List;
import java.util.Map;

/**
 * /api/v1/admin (admin role), across owners: transactions (lists, search, detail, cancel, retry, wake, switches),
 * a pipeline's failures retried in bulk, its live transactions moved to another version (migrate), node groups (pause, drain, resume), the event log, and owners' limits.
 */
public final class AdminRoutes implements RouteGroup {
  private final Search search;
  private final AdminApi admin;
  private final BulkRetry bulk;
  private final GroupAdmin groups;
  private final EventStore events;
  private final OwnerAdmin owners;
  private final Migrations migrations;
  private final DataKeyAdmin dataKeys;

  /** archive is null on a node without one: then only what Redis holds is found. */
  public AdminRoutes(Vertx vertx, StoreContext redis, Transactions tx, Search search, ArchiveStore archive,
                     Config config) {
    ReadStore reads = new ReadStore(redis);
    PipelineStore pipelines = new PipelineStore(redis);
    this.search = search;
    this.admin = new AdminApi(tx, reads, new ControlStore(redis), pipelines, archive);
    this.bulk = new BulkRetry(admin::rerun, reads, archive, config.archive().delay().toMillis(), redis.clock());
    this.groups = new GroupAdmin(vertx, new ControlStore(redis), Edge.groupKnown(new LivenessStore(redis),
        pipelines), redis.ticker());
    this.events = new EventStore(redis);
    this.owners = new OwnerAdmin(new OwnerStore(redis), config.transactions(), config.limits());
    this.migrations = new Migrations(new MigrateStore(redis), pipelines, redis.keys().partitions(), redis.ticker());
    this.dataKeys = new DataKeyAdmin(vertx, new io.conveyor.redis.DataKeyStore(redis), redis.encryption().provider());
  }

  @Override
  public void mount(Router r) {
    // ?list=… is the dashboard's fixed lists; otherwise a search across owners
    r.get("/api/v1/admin/transactions").handler(ctx -> {
      Map<String, String> params = params(ctx);
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
    r.post("/api/v1/admin/pipelines/:name/retry").handler(ctx -> json(ctx, bulk.run(ctx.pathParam("name"),
        ctx.request().params())));
    // no body: every default (a dry run to the current version)
    r.post("/api/v1/admin/pipelines/:name/migrate").handler(ctx -> json(ctx, (ctx.body().buffer() == null
        || ctx.body().buffer().length() == 0 ? io.vertx.core.Future.succeededFuture(new JsonObject()) : body(ctx))
        .compose(b -> migrations.run(ctx.pathParam("name"), b, owner(ctx)))));
    r.post("/api/v1/admin/transactions/:txId/wake").handler(ctx -> answer(ctx, admin.wake(ctx.pathParam("txId")),
        s -> 200));
    r.put("/api/v1/admin/transactions/:txId/switches/:name").handler(ctx -> answer(ctx, body(ctx, "value").compose(b ->
        admin.setSwitch(ctx.pathParam("txId"), ctx.pathParam("name"), b.getValue("value"))), s -> 200));
    r.get("/api/v1/admin/groups/:group").handler(ctx -> json(ctx, groups.act(ctx.pathParam("group"), "read",
        owner(ctx), null)));
    for (String action : List.of("pause", "drain", "resume")) {
      r.post("/api/v1/admin/groups/:group/" + action).handler(ctx -> json(ctx, groups.act(ctx.pathParam("group"),
          action, owner(ctx), action.equals("drain") ? ctx.request().getParam("wait") : null)));
    }
    r.get("/api/v1/admin/events").handler(ctx -> {
      Map<String, String> p = params(ctx);
      try {
        json(ctx, events.read(eventFilter(p)).map(list -> new JsonObject().put("events", list)));
      } catch (TxException e) {
        problem(ctx, e);
      }
    });
    r.get("/api/v1/admin/owners").handler(ctx -> json(ctx, owners.list()));
    r.get("/api/v1/admin/owners/:owner").handler(ctx -> json(ctx, owners.get(ctx.pathParam("owner"))));
    r.put("/api/v1/admin/owners/:owner").handler(ctx -> json(ctx, body(ctx).compose(b ->
        owners.put(ctx.pathParam("owner"), b))));
    r.delete("/api/v1/admin/owners/:owner").handler(ctx -> json(ctx, owners.delete(ctx.pathParam("owner"))));
    r.delete("/api/v1/admin/owners/:owner/data-key").handler(ctx -> json(ctx, dataKeys.shred(ctx.pathParam("owner"))));
    r.post("/api/v1/admin/data-keys/rewrap").handler(ctx -> json(ctx, dataKeys.rewrap()));
  }

  /** GET /api/v1/admin/events: kind, node, subject, since and until (ISO-8601 or ms), limit (1-1000, default 100). */
  private static EventStore.Filter eventFilter(Map<String, String> p) {
    for (Map.Entry<String, String> e : p.entrySet()) {
      if (e.getValue() == null || e.getValue().isBlank()) {
        throw TxException.invalid(e.getKey(), e.getValue() == null ? "given more than once" : "empty: leave it out");
      }
    }
    String kind = p.get("kind");
    if (kind != null && !io.conveyor.redis.EventKinds.ALL.contains(kind)) {
      throw TxException.invalid("kind", "no event kind " + kind + io.conveyor.model.Strict.suggestion(kind,
          io.conveyor.redis.EventKinds.ALL) + "; the kinds are " + String.join(", ", io.conveyor.redis.EventKinds.ALL));
    }
    return new EventStore.Filter(p.get("kind"), p.get("node"), p.get("subject"),
        Search.time(p, "since"), Search.time(p, "until"), Search.limit(p, 100, EventStore.MAX_LENGTH));
  }
}
