package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepResult;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.Set;

/** util/fail: ends the transaction failed (or aborted, with params.abort = true) with params.note. */
public final class FailStep extends BuiltInStep {
  public FailStep() {
    super("util/fail", Set.of("note", "abort"));
  }

  @Override
  Step step(JsonObject params) {
    String note = Params.text(params, "note", "failed by util/fail");
    boolean abort = Params.bool(params, "abort");
    return ctx -> Future.succeededFuture(abort ? StepResult.aborted(note) : StepResult.failed(note));
  }
}
