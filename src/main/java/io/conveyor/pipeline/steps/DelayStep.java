package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepResult;
import io.conveyor.pipeline.StepType;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Duration;

/**
 * util/delay: waits params.duration, then passes its input on. Up to 5s it waits on a timer, holding its
 * worker slot; a longer delay sleeps (the transaction leaves the worker and the reaper wakes it), up to a
 * year.
 */
public final class DelayStep implements StepType {
  static final Duration MAX = Duration.ofDays(365);
  static final Duration IN_PROCESS = Duration.ofSeconds(5);

  @Override
  public String name() {
    return "util/delay";
  }

  @Override
  public Step create(JsonObject params) {
    Params.known(params, java.util.Set.of("duration"));
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
