package io.conveyor.api;

import io.conveyor.domain.Transactions;
import io.vertx.core.Vertx;
import java.util.List;

/**
 * How the composition root builds the HTTP API's route groups for one verticle: on its Vert.x and the
 * Transactions service it opened on its own Redis context (groups open their stores on tx.context()).
 */
@FunctionalInterface
public interface HttpRoutes {
  List<RouteGroup> on(Vertx vertx, Transactions tx);
}
