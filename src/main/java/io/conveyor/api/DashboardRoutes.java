package io.conveyor.api;

import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.StaticHandler;

/** /dashboard: static files from the jar; its API calls carry the admin key the page keeps. */
public final class DashboardRoutes implements RouteGroup {
  @Override
  public void mount(Router r) {
    r.get("/dashboard").handler(ctx -> {
      if (ctx.request().path().endsWith("/")) {
        ctx.next(); // the router matches /dashboard/ here too; the static files answer it
      } else {
        ctx.redirect("/dashboard/");
      }
    });
    r.route("/dashboard/*").handler(StaticHandler.create("dashboard").setCachingEnabled(false));
  }
}
