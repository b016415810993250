package io.conveyor.api;

import io.conveyor.domain.Search;
import io.conveyor.domain.Transactions;
import io.conveyor.model.Strict;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.model.TxSummary;
import io.vertx.core.Future;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** What every route group reads from a request and answers with: bodies, parameters, JSON and problem+json. */
final class HttpIo {
  /** The routing context's key for the owner of the request's API key (set by ApiGate). */
  static final String OWNER = "conveyor.owner";
  /** The routing context's key for the request's ApiKeys.Principal (set by ApiGate). */
  static final String PRINCIPAL = "conveyor.principal";

  private HttpIo() {
  }

  static String owner(RoutingContext ctx) {
    return ctx.get(OWNER);
  }

  static void json(RoutingContext ctx, Future<JsonObject> result) {
    result.onSuccess(j -> ctx.response().putHeader("content-type", "application/json").end(j.encode()))
        .onFailure(e -> problem(ctx, e));
  }

  static void answer(RoutingContext ctx, Future<TxSummary> result, Function<TxSummary, Integer> status) {
    result.onSuccess(s -> ctx.response().setStatusCode(status.apply(s)).putHeader("content-type", "application/json")
        .end(s.toJson().encode())).onFailure(e -> problem(ctx, e));
  }

  /** A cancel's answer: 200 when its tree is cancelled, 202 with cancelPending while the walk goes on. */
  static void cancelled(RoutingContext ctx, Future<Transactions.Cancelled> result) {
    result.onSuccess(c -> ctx.response().setStatusCode(c.pending() == 0 ? 200 : 202)
        .putHeader("content-type", "application/json")
        .end((c.pending() == 0 ? c.summary().toJson() : c.summary().toJson().put("cancelPending", c.pending()))
            .encode())).onFailure(e -> problem(ctx, e));
  }

  /** application/problem+json with a stable type per kind (see Problems for what is 503 and what 500). */
  static void problem(RoutingContext ctx, Throwable e) {
    TxException t = Problems.of(e, ctx.request().method() + " " + ctx.normalizedPath());
    if (ctx.response().ended()) {
      return;
    }
    JsonObject p = t.toJson().put("title", t.kind().type);
    ctx.put(AuditHook.PROBLEM, t.kind().type);
    if (t.kind() == Kind.LIVE_LIMIT) {
      ctx.response().putHeader("Retry-After", Edge.LIVE_LIMIT_RETRY_AFTER); // when some end is unknown: a short wait
    } else if (t.retryAfter() > 0) {
      ctx.response().putHeader("Retry-After", Integer.toString(t.retryAfter()));
    }
    ctx.response().setStatusCode(t.kind().status).putHeader("content-type", "application/problem+json")
        .end(p.encode());
  }

  /** A retry's from: absent or failed (the step that failed), or start; anything else is refused. */
  static Future<Boolean> fromStart(RoutingContext ctx) {
    String from = ctx.request().getParam("from", "failed");
    return switch (from) {
      case "failed" -> Future.succeededFuture(false);
      case "start" -> Future.succeededFuture(true);
      default -> Future.failedFuture(TxException.invalid("from", "expected failed (the default) or start, got "
          + from));
    };
  }

  /** The body, holding no field but these. */
  static Future<JsonObject> body(RoutingContext ctx, String... accepted) {
    return body(ctx).compose(b -> Strict.only(b, accepted));
  }

  static Future<JsonObject> body(RoutingContext ctx) {
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

  /** The query parameters, each once (a repeated one is refused rather than one of its values dropped). */
  static Map<String, String> params(RoutingContext ctx) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String name : ctx.queryParams().names()) {
      List<String> all = ctx.queryParams().getAll(name);
      out.put(name, all.size() == 1 ? all.get(0) : null);
    }
    return out;
  }

  /** ?wait=N (whole seconds, at most http.maxWait): absent is 0; anything else is refused. */
  static long waitMillis(RoutingContext ctx, Duration maxWait) {
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
    if (seconds < 0 || seconds > maxWait.toSeconds()) {
      throw TxException.invalid("wait", "expected whole seconds from 0 to " + maxWait.toSeconds()
          + " (http.maxWait), got " + w + "; poll again for longer");
    }
    return seconds * 1000;
  }

  /** A search of transactions (an owner's, or with owner null every owner's) by the query parameters. */
  static Future<JsonObject> searched(Search search, Map<String, String> params, String owner) {
    for (Map.Entry<String, String> e : params.entrySet()) {
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
}
