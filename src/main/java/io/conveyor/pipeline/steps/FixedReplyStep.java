package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepResult;
import io.conveyor.pipeline.StepType;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

/** util/fixed-reply: answers params.reply as its output, whatever its input. */
public final class FixedReplyStep implements StepType {
  @Override
  public String name() {
    return "util/fixed-reply";
  }

  @Override
  public Step create(JsonObject params) {
    Params.known(params, java.util.Set.of("reply"));
    JsonObject reply = Params.object(params, "reply");
    return ctx -> Future.succeededFuture(StepResult.success(reply.copy()));
  }
}
