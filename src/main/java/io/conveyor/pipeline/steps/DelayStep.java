package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Set;

/**
 * util/delay: waits params.duration, then passes its input on. Up to 5s it waits on a timer, holding its
 * worker slot; a longer delay sleeps (the transaction leaves the worker and the reaper wakes it), up to a
 * year.
 */
public final class DelayStep extends BuiltInStep {
  static final Duration MAX = Duration.ofDays(365);
  static final Duration IN_PROCESS = Duration.ofSeconds(5);

  public DelayStep() {
    super("util/delay", Set.of("duration"));
  }

  @Override
  Step step(JsonObject params) {
    Duration duration = Params.duration(params, "duration", MAX);
    if (duration.compareTo(IN_PROCESS) > 0) {
      return ctx -> Future.succeededFuture(ctx.retry() == 0 ? new StepResult.Sleep(duration, null)
          : StepResult.success(ctx.input()));
    }
    long ms = Math.max(1, duration.toMillis());
    return ctx -> {
      Promise<StepResult> done = Promise.promise();
      ctx.vertx().setTimer(ms, t -> done.complete(StepResult.success(ctx.input())));
      return done.future();
    };
  }
}
