package io.conveyor.api;

import io.vertx.ext.web.Router;

/**
 * One part of the HTTP API, built by the composition root with only what it uses: it adds its routes to the
 * router. HttpApiVerticle mounts the groups in the order it is given them (the gate before the routes it guards).
 */
public interface RouteGroup {
  void mount(Router router);
}
