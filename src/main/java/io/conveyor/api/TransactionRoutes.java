package io.conveyor.api;

import static io.conveyor.api.HttpIo.answer;
import static io.conveyor.api.HttpIo.body;
import static io.conveyor.api.HttpIo.cancelled;
import static io.conveyor.api.HttpIo.fromStart;
import static io.conveyor.api.HttpIo.json;
import static io.conveyor.api.HttpIo.owner;
import static io.conveyor.api.HttpIo.params;
import static io.conveyor.api.HttpIo.searched;

import io.conveyor.config.Config;
import io.conveyor.domain.Search;
import io.conveyor.domain.Transactions;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.QueueStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Map;

/**
 * /api/v1/transactions (client role), for the key's owner: start, search or look up by externalId, read, cancel,
 * retry and set a switch. ?wait=N (seconds, at most http.maxWait) long-polls for the outcome. queue takes the
 * owners' start-rate tokens.
 */
public record TransactionRoutes(Vertx vertx, Transactions tx, QueueStore queue, Search search, Config.Http http,
                                NodeMetrics metrics) implements RouteGroup {
  @Override
  public void mount(Router r) {
    // a full Redis refuses before the rate token is written
    r.post("/api/v1/transactions").handler(ctx -> answer(ctx, body(ctx).compose(b -> Edge.ownedBy(b, owner(ctx)))
        .compose(b -> tx.admitsStarts().compose(v -> withinRate(ctx))
        .compose(v -> tx.start(b.put("owner", owner(ctx)), ctx.request().getHeader("traceparent"))))
        .compose(s -> awaitOutcome(ctx, s)),
        s -> s.status().isFinal() || s.debounced() ? 200 : 202));
    // ?externalId=… alone is the lookup it always was (one transaction, or 404); any other query is a search
    r.get("/api/v1/transactions").handler(ctx -> {
      Map<String, String> params = params(ctx);
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
  }

  /**
   * What admits a start, and a business event (which may start or wake one): a Redis under its memory guard
   * refuses first (before the rate token is written), then the owner's start-rate bucket. One owner's flood of
   * either cannot fill the Redis every owner shares.
   */
  public Future<Void> admit(RoutingContext ctx, String owner) {
    return tx.admitsStarts().compose(v -> withinRate(ctx, owner));
  }

  private Future<Void> withinRate(RoutingContext ctx) {
    return withinRate(ctx, owner(ctx));
  }

  /** An owner's starts are limited by a token bucket kept in Redis (http.startRate per second, startBurst). */
  private Future<Void> withinRate(RoutingContext ctx, String owner) {
    return queue.takeStartToken(owner, http.startRate(owner), http.startBurst(owner))
        .compose(waitMs -> {
          if (waitMs == 0) {
            return Future.succeededFuture();
          }
          ctx.response().putHeader("Retry-After", Long.toString((waitMs + 999) / 1000));
          return Future.failedFuture(new TxException(Kind.RATE_LIMITED, "owner " + owner
              + " starts (and sends events) more than " + http.startRate(owner) + " transactions a second; retry in "
              + waitMs + " ms", null, null));
        });
  }

  /** With ?wait=N, holds the answer until the transaction ends or N seconds pass (LongPoll). */
  private Future<TxSummary> awaitOutcome(RoutingContext ctx, TxSummary now) {
    long waitMs = HttpIo.waitMillis(ctx, http.maxWait());
    if (waitMs <= 0) {
      return Future.succeededFuture(now);
    }
    if (now.status().isFinal()) {
      return tx.pollAnswered(now);
    }
    return LongPoll.await(vertx, tx, metrics, now, waitMs);
  }
}
