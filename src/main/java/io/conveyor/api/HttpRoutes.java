package io.conveyor.api;

import io.conveyor.domain.Transactions;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Vertx;
import java.util.List;

/**
 * How the composition root builds the HTTP API's route groups for one verticle: on its Vert.x, the Redis context
 * it opened (a link bound to the verticle's context) and the Transactions service on that context.
 */
@FunctionalInterface
public interface HttpRoutes {
  List<RouteGroup> on(Vertx vertx, StoreContext redis, Transactions tx);
}
