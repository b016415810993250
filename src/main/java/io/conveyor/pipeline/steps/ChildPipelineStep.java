package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepResult;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * util/child-pipeline: runs a child pipeline, in the child's own node group, with this step's input; the
 * parent waits without holding a worker, then continues in its own group with the child's status and
 * output as this step's result. The child is params.pipeline, or chosen by the input field params.field
 * through params.map (value → pipeline), falling back to params.default.
 */
public final class ChildPipelineStep extends BuiltInStep {
  private static final String NAME = "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}";

  public ChildPipelineStep() {
    super("util/child-pipeline", Set.of("pipeline", "field", "map", "default"));
  }

  @Override
  Step step(JsonObject params) {
    String fixed = optionalName(params, "pipeline");
    String field = params.getValue("field") == null ? null : Params.text(params, "field", null);
    String fallback = optionalName(params, "default");
    Map<String, String> map = new HashMap<>();
    Object raw = params.getValue("map", new JsonObject());
    if (!(raw instanceof JsonObject m)) {
      throw new IllegalArgumentException("params.map: expected an object of value → pipeline name");
    }
    for (String k : m.fieldNames()) {
      if (!(m.getValue(k) instanceof String p) || !p.matches(NAME)) {
        throw new IllegalArgumentException("params.map." + k + ": expected a pipeline name");
      }
      map.put(k, p);
    }
    if (fixed == null && (field == null || (map.isEmpty() && fallback == null))) {
      throw new IllegalArgumentException("params: give pipeline, or field with map and/or default");
    }
    return ctx -> {
      String chosen = fixed;
      if (chosen == null) {
        Object value = ctx.input().getValue(field);
        chosen = map.getOrDefault(value == null ? null : String.valueOf(value), fallback);
      }
      return Future.succeededFuture(chosen == null
          ? StepResult.failed("no child pipeline for " + field + " = " + ctx.input().getValue(field))
          : new StepResult.Child(chosen, ctx.input()));
    };
  }

  private static String optionalName(JsonObject params, String name) {
    Object v = params.getValue(name);
    if (v == null) {
      return null;
    }
    if (!(v instanceof String s) || !s.matches(NAME)) {
      throw new IllegalArgumentException("params." + name + ": expected a pipeline name");
    }
    return s;
  }
}
