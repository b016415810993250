package io.conveyor.api;

import io.conveyor.config.Config;
import io.conveyor.config.TlsPair;
import io.conveyor.domain.Transactions;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.function.Function;

/**
 * The HTTP API under /api/v1 (contract: docs/openapi.yaml), with health, metrics and the dashboard. It owns its
 * server and its Transactions service (on a Redis link of its own) and mounts the route groups the composition
 * root builds on them; errors are application/problem+json, a route that does not exist included.
 */
public final class HttpApiVerticle extends VerticleBase {
  private final Config.Http http;
  private final Config.HttpTls tls;
  private final RedisAccess redis;
  private final Function<StoreContext, Transactions> transactions;
  private final HttpRoutes routes;
  private Transactions tx;
  private Router router;
  private HttpServer server;
  private TlsReload reload;

  /** transactions builds the service on this verticle's own Redis context; routes the groups on it. */
  public HttpApiVerticle(Config.Http http, Config.HttpTls tls, RedisAccess redis,
                         Function<StoreContext, Transactions> transactions, HttpRoutes routes) {
    this.http = http;
    this.tls = tls;
    this.redis = redis;
    this.transactions = transactions;
    this.routes = routes;
  }

  @Override
  public Future<?> start() {
    StoreContext context = redis.open(vertx);
    tx = transactions.apply(context);
    router = mount(routes.on(vertx, context, tx));
    if (!tls.enabled()) {
      server = vertx.createHttpServer().requestHandler(router);
      return server.listen(http.port(), http.host());
    }
    // TLS (README, TLS): the pair is read off the event loop, then checked again every reloadInterval
    return vertx.executeBlocking(() -> TlsPair.load(tls))
        .compose(pair -> {
          server = vertx.createHttpServer(new HttpServerOptions().setSsl(true).setKeyCertOptions(pair.options()))
              .requestHandler(router);
          reload = new TlsReload(vertx, server, tls, pair);
          return server.listen(http.port(), http.host()).onSuccess(s -> reload.start());
        });
  }

  /** Every route the API serves, once started; a test holds it against docs/openapi.yaml. */
  public Router router() {
    return router;
  }

  private Router mount(List<RouteGroup> groups) {
    Router r = Router.router(vertx);
    groups.forEach(g -> g.mount(r));
    // no route matched (or not with this method): a problem, like every other refusal
    r.route().last().handler(ctx -> HttpIo.problem(ctx, new TxException(Kind.NOT_FOUND, "no route "
        + ctx.request().method() + " " + ctx.normalizedPath(), null, null)));
    r.route().failureHandler(this::failure);
    return r;
  }

  private void failure(RoutingContext ctx) {
    int code = ctx.statusCode();
    if (code == 413) {
      HttpIo.problem(ctx, new TxException(Kind.TOO_LARGE, "the body is over " + http.maxBodyBytes()
          + " bytes", "body", null));
    } else if (ctx.failure() != null) {
      HttpIo.problem(ctx, ctx.failure());
    } else {
      HttpIo.problem(ctx, new TxException(code == 404 ? Kind.NOT_FOUND : Kind.INVALID_INPUT, "no such route", null,
          null));
    }
  }

  @Override
  public Future<?> stop() {
    if (reload != null) {
      reload.stop();
    }
    return (server == null ? Future.succeededFuture() : server.close()).eventually(tx::close);
  }
}
