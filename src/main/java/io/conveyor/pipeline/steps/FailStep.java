package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepResult;
import io.conveyor.pipeline.StepType;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

/** util/fail: ends the transaction failed (or aborted, with params.abort = true) with params.note. */
public final class FailStep implements StepType {
  @Override
  public String name() {
    return "util/fail";
  }

  @Override
  public Step create(JsonObject params) {
    Params.known(params, java.util.Set.of("note", "abort"));
    String note = Params.text(params, "note", "failed by util/fail");
    boolean abort = Params.bool(params, "abort");
    return ctx -> Future.succeededFuture(abort ? StepResult.aborted(note) : StepResult.failed(note));
  }
}
