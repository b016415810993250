package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepResult;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.Set;

/** util/fixed-reply: answers params.reply as its output, whatever its input. */
public final class FixedReplyStep extends BuiltInStep {
  public FixedReplyStep() {
    super("util/fixed-reply", Set.of("reply"));
  }

  @Override
  Step step(JsonObject params) {
    JsonObject reply = Params.object(params, "reply");
    return ctx -> Future.succeededFuture(StepResult.success(reply.copy()));
  }
}
