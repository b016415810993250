package io.conveyor.pipeline;

import io.vertx.core.Future;

/**
 * One unit of business logic. It runs on the node's event loop: return a Future and never block
 * (hand blocking work to executeBlocking). A thrown exception or a failed Future ends the transaction
 * internal-error; exceeding the step's timeout ends it timeout.
 */
@FunctionalInterface
public interface Step {
  Future<StepResult> run(StepContext ctx);
}
