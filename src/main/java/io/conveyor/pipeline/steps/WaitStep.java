package io.conveyor.pipeline.steps;

import io.conveyor.model.Durations;
import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepResult;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Set;

/**
 * util/wait: waits, off any worker, until the switch params.switch is set on the transaction, then passes
 * its input on with the switch's value under that name. Not set within params.timeout (default 1d): the
 * transaction ends failed.
 */
public final class WaitStep extends BuiltInStep {
  public WaitStep() {
    super("util/wait", Set.of("switch", "timeout"));
  }

  @Override
  Step step(JsonObject params) {
    String name = Params.text(params, "switch", null);
    Duration timeout = params.containsKey("timeout") ? Params.duration(params, "timeout", Duration.ofDays(365))
        : Duration.ofDays(1);
    return ctx -> {
      if (ctx.switches().containsKey(name)) {
        return Future.succeededFuture(StepResult.success(ctx.input().copy().put(name, ctx.switches().getValue(name))));
      }
      return Future.succeededFuture(ctx.retry() == 0 ? new StepResult.Sleep(timeout, name)
          : StepResult.failed("switch " + name + " was not set within " + Durations.format(timeout)));
    };
  }
}
