package io.conveyor.testing;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepRegistry;
import io.conveyor.pipeline.StepResult;
import io.conveyor.pipeline.StepType;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Step types for tests: one that records what it saw, one that throws, one that holds until released, one
 * that answers from another thread.
 */
public final class TestSteps {
  /** Inputs test/record was called with, in order, with the txId and attempt it saw. */
  public final List<JsonObject> recorded = new CopyOnWriteArrayList<>();
  /** Steps test/hold is holding; complete one to let its transaction go on. */
  public final BlockingQueue<Promise<StepResult>> held = new LinkedBlockingQueue<>();

  public StepRegistry registry() {
    return StepRegistry.withBuiltIns()
        .register(type("test/record", p -> ctx -> {
          recorded.add(new JsonObject().put("txId", ctx.txId()).put("attempt", ctx.attempt())
              .put("step", ctx.step()).put("input", ctx.input()).put("nodeId", ctx.nodeId()));
          return Future.succeededFuture(StepResult.success(ctx.input().copy().put("recorded", true)));
        }))
        .register(type("test/progress", p -> ctx -> ctx.reportProgress(new JsonObject().put("percent", 50))
            .compose(v -> ctx.reportProgress(new JsonObject().put("percent", 90)))
            .map(v -> StepResult.success(ctx.input()))))
        .register(type("test/log", p -> ctx -> {
          // logs later, from a timer: the line must still name the transaction, the step and the node
          io.vertx.core.Promise<StepResult> done = io.vertx.core.Promise.promise();
          ctx.vertx().setTimer(5, t -> {
            ctx.log().info("step says hello");
            done.complete(StepResult.success(ctx.input()));
          });
          return done.future();
        }))
        .register(type("test/elsewhere", p -> ctx -> {
          // answers from a thread of its own, as a step built on a non-Vert.x client library would
          Promise<StepResult> done = Promise.promise();
          Thread answer = new Thread(() -> done.complete(StepResult.success(ctx.input())), "test-elsewhere");
          answer.start();
          return done.future();
        }))
        .register(type("test/throw", p -> ctx -> {
          throw new IllegalStateException("boom");
        }))
        .register(type("test/hold", p -> ctx -> {
          Promise<StepResult> promise = Promise.promise();
          held.add(promise);
          return promise.future();
        }));
  }

  private static StepType type(String name, java.util.function.Function<JsonObject, Step> create) {
    return new StepType() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public Step create(JsonObject params) {
        return create.apply(params);
      }
    };
  }
}
