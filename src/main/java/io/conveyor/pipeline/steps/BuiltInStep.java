package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepType;
import io.vertx.core.json.JsonObject;
import java.util.Set;

/**
 * What every built-in step type shares: its type name, and that a param it does not know is refused (naming the
 * ones it does) before the step reads any.
 */
abstract class BuiltInStep implements StepType {
  private final String name;
  private final Set<String> params;

  BuiltInStep(String name, Set<String> params) {
    this.name = name;
    this.params = params;
  }

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final Step create(JsonObject params) {
    Params.known(params, this.params);
    return step(params);
  }

  /** The step for these params, which hold only known names; IllegalArgumentException when one is wrong. */
  abstract Step step(JsonObject params);
}
