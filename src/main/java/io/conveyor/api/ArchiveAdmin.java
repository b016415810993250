package io.conveyor.api;

import io.conveyor.model.Durations;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.Ids;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.redis.Code;
import io.conveyor.redis.QuarantineStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The archive's quarantine for admins: the transactions the archive database refused alone (kept in Redis,
 * listed with the database's message), retried (due for archiving again at once) or dropped (deleted from
 * Redis, never archived). Every act is logged and leaves an event naming the admin key's owner.
 */
public record ArchiveAdmin(QuarantineStore store, Duration lagWarning, NodeMetrics metrics) implements RouteGroup {
  private static final Logger log = LoggerFactory.getLogger(ArchiveAdmin.class);
  static final int MAX_LIMIT = 1000;

  /** Before the router's own /metrics route: the archive lag's gauge, read from Redis for each scrape. */
  void mountLagGauge(Router r) {
    r.get("/metrics").handler(ctx -> lag().onComplete(ar -> ctx.next()));
  }

  /**
   * After authentication: GET /api/v1/admin/archive (lag and quarantine count), GET …/quarantine,
   * POST …/quarantine/{txId}/retry and DELETE …/quarantine/{txId}.
   */
  @Override
  public void mount(Router r) {
    ArchiveAdmin admin = this;
    r.get("/api/v1/admin/archive").handler(ctx -> answer(ctx, admin.view()));
    String base = "/api/v1/admin/archive/quarantine";
    r.get(base).handler(ctx -> answer(ctx, admin.list(ctx.request().getParam("cursor"),
        ctx.request().getParam("limit"))));
    r.post(base + "/:txId/retry").handler(ctx -> answer(ctx, admin.act(ctx.pathParam("txId"), "retry", by(ctx))));
    r.delete(base + "/:txId").handler(ctx -> answer(ctx, admin.act(ctx.pathParam("txId"), "drop", by(ctx))));
  }

  /** How long (ms) the oldest due transaction has waited for the archive; the gauge follows each read. */
  Future<Long> lag() {
    return store.lag().onSuccess(metrics::archiveLag);
  }

  /** {lagSeconds, lagWarningSeconds, lagging, quarantined}: the dashboard's archive line. */
  Future<JsonObject> view() {
    Future<Long> lag = lag();
    Future<Long> count = store.count();
    return Future.all(lag, count).map(v -> new JsonObject().put("lagSeconds", lag.result() / 1000.0)
        .put("lagWarningSeconds", lagWarning.toSeconds()).put("lagging", lag.result() > lagWarning.toMillis())
        .put("quarantined", count.result()));
  }

  /**
   * The archive's readiness: reachable answers "ok" or what is wrong; once that is ok, "lagging: …" when the
   * oldest due transaction has waited longer than archive.lagWarning (a warning: the node stays ready).
   */
  Future<String> readiness(Future<String> reachable) {
    return reachable.compose(ok -> lag().map(ms -> ms <= lagWarning.toMillis() ? ok : "lagging: the oldest "
        + "transaction due for archiving has waited " + Durations.format(Duration.ofMillis(ms)) + " (archive.lagWarning "
        + Durations.format(lagWarning) + "); see the archive leader's log and GET /api/v1/admin/archive/quarantine"));
  }

  private static String by(RoutingContext ctx) {
    return ctx.get(HttpIo.OWNER);
  }

  private static void answer(RoutingContext ctx, Future<JsonObject> result) {
    result.onSuccess(j -> ctx.response().putHeader("content-type", "application/json").end(j.encode()))
        .onFailure(e -> HttpIo.problem(ctx, e));
  }

  /** A page of quarantined transactions ({quarantined, next}); next goes back as cursor. */
  Future<JsonObject> list(String cursor, String limit) {
    int n;
    try {
      n = limit == null ? 100 : Integer.parseInt(limit);
      if (n < 1 || n > MAX_LIMIT) {
        throw new NumberFormatException();
      }
    } catch (NumberFormatException e) {
      return Future.failedFuture(TxException.invalid("limit", "expected a whole number from 1 to " + MAX_LIMIT
          + ", got " + limit));
    }
    if (cursor != null && !cursor.matches("\\d{1,6}-\\d{1,20}")) {
      return Future.failedFuture(TxException.invalid("cursor", "expected the next of an earlier answer "
          + "(PARTITION-POSITION), got " + cursor));
    }
    return store.list(cursor, n).map(page -> {
      JsonArray items = new JsonArray();
      page.items().forEach(q -> items.add(q.toJson()));
      return new JsonObject().put("quarantined", items).put("next", page.next());
    });
  }

  /** Retry or drop one quarantined transaction; 404 when it is not quarantined. */
  Future<JsonObject> act(String txId, String action, String by) {
    if (!Ids.isTxId(txId)) {
      return Future.failedFuture(TxException.invalid("txId", "expected tx- and 32 hex digits, got " + txId));
    }
    Future<Code> done = action.equals("retry") ? store.retry(txId, by) : store.drop(txId, by);
    return done.compose(code -> {
      if (code != Code.OK) {
        return Future.failedFuture(new TxException(Kind.NOT_FOUND, txId + " is not quarantined (see GET "
            + "/api/v1/admin/archive/quarantine)", null, txId));
      }
      log.info("archive quarantine: {} {} by {}", txId, action.equals("retry") ? "put back to be archived"
          : "dropped from Redis", by);
      return Future.succeededFuture(new JsonObject().put("txId", txId)
          .put("result", action.equals("retry") ? "due" : "dropped"));
    });
  }
}
