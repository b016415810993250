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

  /** Every attempt test/flaky made: {txId, step, stepAttempt, atNanos}, in order. */
  public final List<JsonObject> attempts = new CopyOnWriteArrayList<>();
  /** Inputs test/watch-cancel saw cancelled, by txId. */
  public final List<String> sawCancel = new CopyOnWriteArrayList<>();

  /** test/transient: failures it injected, and attempts it saw in all. */
  public final java.util.concurrent.atomic.AtomicInteger injected = new java.util.concurrent.atomic.AtomicInteger();
  public final java.util.concurrent.atomic.AtomicInteger transientAttempts =
      new java.util.concurrent.atomic.AtomicInteger();

  /** How often test/transient fails a transaction before it succeeds: 1 to 3 times for a fifth of txIds. */
  public static int transientFailures(String txId) {
    int h = txId.hashCode() & 0x7fffffff;
    return h % 5 == 0 ? 1 + (h / 5) % 3 : 0;
  }

  /** test/broken fails while this is true (a downstream service that is broken until fixed). */
  public final java.util.concurrent.atomic.AtomicBoolean broken = new java.util.concurrent.atomic.AtomicBoolean(true);

  /** The next step test/hold holds, waiting up to 10 s for one (failing the test when none comes). */
  public Promise<StepResult> nextHeld() {
    try {
      Promise<StepResult> p = held.poll(10, java.util.concurrent.TimeUnit.SECONDS);
      if (p == null) {
        throw new AssertionError("no step was held within 10 s");
      }
      return p;
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

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
        .register(type("test/flaky", p -> ctx -> {
          // fails its first params.failures attempts (with params.code), then succeeds
          attempts.add(new JsonObject().put("txId", ctx.txId()).put("step", ctx.step())
              .put("stepAttempt", ctx.stepAttempt()).put("atNanos", System.nanoTime()));
          return Future.succeededFuture(ctx.stepAttempt() <= p.getInteger("failures", 1)
              ? new StepResult.Failed("flaked on attempt " + ctx.stepAttempt(), null, p.getString("code", "failed"),
                  true, null)
              : StepResult.success(ctx.input().copy().put("attempts", ctx.stepAttempt())));
        }))
        .register(type("test/transient", p -> ctx -> {
          transientAttempts.incrementAndGet();
          if (ctx.stepAttempt() <= transientFailures(ctx.txId())) {
            injected.incrementAndGet();
            return Future.succeededFuture(new StepResult.Failed("transient", null));
          }
          return Future.succeededFuture(StepResult.success(ctx.input()));
        }))
        .register(type("test/broken", p -> ctx -> Future.succeededFuture(broken.get()
            ? new StepResult.Failed("the service is broken", null)
            : StepResult.success(ctx.input().copy().put("fixed", true)))))
        .register(type("test/watch-cancel", p -> ctx -> {
          // runs until its transaction's owner asks to cancel it (or its timeout), looking every 5 ms
          Promise<StepResult> done = Promise.promise();
          long until = System.nanoTime() + ctx.timeout().toNanos();
          ctx.vertx().setPeriodic(5, t -> {
            if (System.nanoTime() > until) {
              ctx.vertx().cancelTimer(t);
              done.fail("no cancel came");
            } else if (ctx.cancelled()) {
              ctx.vertx().cancelTimer(t);
              sawCancel.add(ctx.txId());
              done.complete(StepResult.success(new JsonObject().put("sawCancel", true)));
            }
          });
          return done.future();
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
