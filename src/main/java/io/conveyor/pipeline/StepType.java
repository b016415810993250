package io.conveyor.pipeline;

import io.vertx.core.json.JsonObject;

/**
 * A kind of step, registered under a type name. create() checks the params when a pipeline is loaded
 * (throwing IllegalArgumentException with what is wrong) and returns the step to run.
 */
public interface StepType {
  String name();

  Step create(JsonObject params);
}
