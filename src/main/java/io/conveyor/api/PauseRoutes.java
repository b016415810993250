package io.conveyor.api;

import static io.conveyor.api.HttpIo.answer;
import static io.conveyor.api.HttpIo.body;
import static io.conveyor.api.HttpIo.json;
import static io.conveyor.api.HttpIo.owner;
import static io.conveyor.api.HttpIo.params;

import io.conveyor.database.ArchiveStore;
import io.conveyor.domain.Pauses;
import io.conveyor.domain.Search;
import io.conveyor.domain.Transactions;
import io.conveyor.model.TxException;
import io.conveyor.redis.ControlStore;
import io.conveyor.redis.PauseStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.ReadStore;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * Pause and resume (issue 34), beside cancel and retry: one transaction of the key's owner
 * (/api/v1/transactions/{txId}/pause, /resume), any owner's (/api/v1/admin/…), and every transaction a search
 * matches (/api/v1/transactions/pause?status=…, /api/v1/admin/transactions/pause?…, and /resume). The body is
 * optional: pause {reason?, tree?}, resume {timers?, tree?}. who paused is the key's owner.
 */
public final class PauseRoutes implements RouteGroup {
  private final Pauses pauses;
  private final AdminApi admin;
  private final BulkPause bulk;

  /** archive is null on a node without one. */
  public PauseRoutes(StoreContext redis, Transactions tx, Search search, ArchiveStore archive) {
    this.pauses = new Pauses(new PauseStore(redis), tx);
    this.admin = new AdminApi(tx, new ReadStore(redis), new ControlStore(redis), new PipelineStore(redis), archive);
    this.bulk = new BulkPause(search, pauses);
  }

  @Override
  public void mount(Router r) {
    r.post("/api/v1/transactions/pause").handler(ctx -> json(ctx, asked(ctx, false)
        .compose(ask -> bulk.run(params(ctx), owner(ctx), owner(ctx), false, ask))));
    r.post("/api/v1/transactions/resume").handler(ctx -> json(ctx, asked(ctx, true)
        .compose(ask -> bulk.run(params(ctx), owner(ctx), owner(ctx), true, ask))));
    r.post("/api/v1/admin/transactions/pause").handler(ctx -> json(ctx, asked(ctx, false)
        .compose(ask -> bulk.run(params(ctx), null, owner(ctx), false, ask))));
    r.post("/api/v1/admin/transactions/resume").handler(ctx -> json(ctx, asked(ctx, true)
        .compose(ask -> bulk.run(params(ctx), null, owner(ctx), true, ask))));
    r.post("/api/v1/transactions/:txId/pause").handler(ctx -> answer(ctx, asked(ctx, false)
        .compose(ask -> pauses.pause(ctx.pathParam("txId"), owner(ctx), owner(ctx), ask)), s -> 200));
    r.post("/api/v1/transactions/:txId/resume").handler(ctx -> answer(ctx, asked(ctx, true)
        .compose(ask -> pauses.resume(ctx.pathParam("txId"), owner(ctx), owner(ctx), ask)), s -> 200));
    r.post("/api/v1/admin/transactions/:txId/pause").handler(ctx -> answer(ctx, asked(ctx, false)
        .compose(ask -> admin.ownerOf(ctx.pathParam("txId"))
            .compose(o -> pauses.pause(ctx.pathParam("txId"), o, owner(ctx), ask))), s -> 200));
    r.post("/api/v1/admin/transactions/:txId/resume").handler(ctx -> answer(ctx, asked(ctx, true)
        .compose(ask -> admin.ownerOf(ctx.pathParam("txId"))
            .compose(o -> pauses.resume(ctx.pathParam("txId"), o, owner(ctx), ask))), s -> 200));
  }

  /** The body (none is the defaults), checked: a pause's or a resume's. */
  private static Future<Pauses.Ask> asked(RoutingContext ctx, boolean resume) {
    boolean none = ctx.body().buffer() == null || ctx.body().buffer().length() == 0;
    return (none ? Future.succeededFuture(new JsonObject()) : body(ctx)).compose(b -> {
      try {
        return Future.succeededFuture(resume ? Pauses.resumeAsk(b) : Pauses.pauseAsk(b));
      } catch (TxException e) {
        return Future.failedFuture(e);
      }
    });
  }
}
