package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepResult;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * flow/parallel: runs branches as child transactions, each in its pipeline's group on any node, and waits off
 * the worker for their join. The branches are params.branches ([{"pipeline", "input"?}], the step's input when a
 * branch gives none), or one pipeline (params.pipeline) over each element of the input array named by
 * params.forEach (an object element is the branch's input, any other value is {"item": value}). params.join is
 * "all" (default) or "any", or params.atLeast names how many must succeed; params.maxConcurrency bounds the
 * branches running at once; params.continueOnFailure lets branches fail without failing the step until the
 * join is out of reach. Output: {"outputs": [...], "statuses": [...]} in branch order (null where a branch did
 * not succeed).
 */
public final class ParallelStep extends BuiltInStep {
  /** The most branches one step starts. */
  public static final int MAX_BRANCHES = 1000;
  private static final String NAME = "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}";
  private static final Set<String> PARAMS = Set.of("branches", "forEach", "pipeline", "join", "atLeast",
      "maxConcurrency", "continueOnFailure");

  public ParallelStep() {
    super("flow/parallel", PARAMS);
  }

  @Override
  Step step(JsonObject params) {
    List<StepResult.Fork.Branch> fixed = params.containsKey("branches") ? branches(params) : null;
    String forEach = params.containsKey("forEach") ? Params.text(params, "forEach", null) : null;
    if ((fixed == null) == (forEach == null)) {
      throw new IllegalArgumentException("params: give branches, or forEach with pipeline (not both)");
    }
    String pipeline = null;
    if (forEach != null) {
      pipeline = Params.text(params, "pipeline", null);
      if (!pipeline.matches(NAME)) {
        throw new IllegalArgumentException("params.pipeline: expected a pipeline name, got " + pipeline);
      }
    } else if (params.containsKey("pipeline")) {
      throw new IllegalArgumentException("params.pipeline: goes with forEach; with branches each names its own");
    }
    String join = Params.text(params, "join", "all");
    if (!join.equals("all") && !join.equals("any")) {
      throw new IllegalArgumentException("params.join: expected all or any, got " + join);
    }
    if (params.containsKey("atLeast") && params.containsKey("join")) {
      throw new IllegalArgumentException("params: give join or atLeast, not both");
    }
    int atLeast = params.containsKey("atLeast") ? Params.integer(params, "atLeast", 1, 1, MAX_BRANCHES) : 0;
    if (fixed != null && atLeast > fixed.size()) {
      throw new IllegalArgumentException("params.atLeast: " + atLeast + " of " + fixed.size() + " branches");
    }
    int maxConcurrency = Params.integer(params, "maxConcurrency", MAX_BRANCHES, 1, MAX_BRANCHES);
    boolean continueOnFailure = Params.bool(params, "continueOnFailure");
    String each = pipeline;
    return ctx -> {
      List<StepResult.Fork.Branch> branches = fixed;
      if (branches == null) {
        Object items = ctx.input().getValue(forEach);
        if (!(items instanceof JsonArray a)) {
          return Future.succeededFuture(new StepResult.Failed("input." + forEach + ": expected an array to run "
              + each + " over, got " + (items == null ? "nothing" : items), null, "bad-input", false, null));
        }
        if (a.size() > MAX_BRANCHES) {
          return Future.succeededFuture(new StepResult.Failed("input." + forEach + " has " + a.size()
              + " elements; a parallel step runs at most " + MAX_BRANCHES, null, "bad-input", false, null));
        }
        branches = new ArrayList<>(a.size());
        for (Object item : a) {
          branches.add(new StepResult.Fork.Branch(each, item instanceof JsonObject o ? o
              : new JsonObject().put("item", item)));
        }
      } else {
        List<StepResult.Fork.Branch> withInput = new ArrayList<>(branches.size());
        for (StepResult.Fork.Branch b : branches) {
          withInput.add(b.input() == null ? new StepResult.Fork.Branch(b.pipeline(), ctx.input()) : b);
        }
        branches = withInput;
      }
      int n = branches.size();
      if (atLeast > n) {
        return Future.succeededFuture(new StepResult.Failed("params.atLeast is " + atLeast + " but input."
            + forEach + " has " + n + " elements", null, "bad-input", false, null));
      }
      if (n == 0) {
        return Future.succeededFuture(new StepResult.Success(new JsonObject().put("outputs", new JsonArray())
            .put("statuses", new JsonArray())));
      }
      int need = atLeast > 0 ? atLeast : join.equals("any") ? 1 : n;
      return Future.succeededFuture(new StepResult.Fork(branches, need, atLeast == 0 && join.equals("all"),
          continueOnFailure, Math.min(maxConcurrency, n)));
    };
  }

  private static List<StepResult.Fork.Branch> branches(JsonObject params) {
    if (!(params.getValue("branches") instanceof JsonArray a) || a.isEmpty() || a.size() > MAX_BRANCHES) {
      throw new IllegalArgumentException("params.branches: expected an array of 1 to " + MAX_BRANCHES
          + " {\"pipeline\": name, \"input\": {...}}");
    }
    List<StepResult.Fork.Branch> out = new ArrayList<>(a.size());
    for (int i = 0; i < a.size(); i++) {
      String at = "params.branches[" + i + "]";
      if (!(a.getValue(i) instanceof JsonObject b)) {
        throw new IllegalArgumentException(at + ": expected {\"pipeline\": name, \"input\": {...}}");
      }
      for (String f : b.fieldNames()) {
        if (!f.equals("pipeline") && !f.equals("input")) {
          throw new IllegalArgumentException(at + ": unknown field '" + f + "' (expected input, pipeline)");
        }
      }
      if (!(b.getValue("pipeline") instanceof String p) || !p.matches(NAME)) {
        throw new IllegalArgumentException(at + ".pipeline: expected a pipeline name");
      }
      Object input = b.getValue("input");
      if (input != null && !(input instanceof JsonObject)) {
        throw new IllegalArgumentException(at + ".input: expected a JSON object");
      }
      out.add(new StepResult.Fork.Branch(p, (JsonObject) input));
    }
    return out;
  }
}
