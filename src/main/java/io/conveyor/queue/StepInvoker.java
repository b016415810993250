package io.conveyor.queue;

import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.Dequeued;
import io.conveyor.model.Durations;
import io.conveyor.pipeline.CompiledPipeline;
import io.conveyor.pipeline.StepContext;
import io.conveyor.pipeline.StepLog;
import io.conveyor.pipeline.StepResult;
import io.conveyor.redis.Code;
import io.conveyor.redis.RunStore;

import io.conveyor.time.Ticker;
import io.conveyor.trace.Tracing;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Calls one step of a run: its Future, an exception it throws, and its timeout all end up in one Future, on
 * the runner's context; the attempt gets a span when the run is traced, and its time is kept in the run.
 */
final class StepInvoker {
  private static final Logger stepLog = LoggerFactory.getLogger("io.conveyor.step");

  private final Vertx vertx;
  private final RunStore store;
  private final PipelineRunner.Settings settings;
  private final NodeMetrics metrics;
  private final Tracing tracing;

  StepInvoker(Vertx vertx, RunStore store, PipelineRunner.Settings settings, NodeMetrics metrics, Tracing tracing) {
    this.vertx = vertx;
    this.store = store;
    this.settings = settings;
    this.metrics = metrics;
    this.tracing = tracing;
  }

  /** The attempt of step i under its retry policy: the stored one for the step it was dequeued at, else 1. */
  static int stepAttempt(Dequeued tx, int i) {
    return i == tx.step() ? tx.stepAttempt() : 1;
  }

  Future<StepResult> invoke(CompiledPipeline p, Run run, int i, JsonObject input) {
    Dequeued tx = run.tx();
    Duration timeout = p.pipeline().stepTimeout(i, settings.stepTimeout());
    String type = p.pipeline().steps().get(i).type();
    Span span = tx.trace() == null ? null : tracing.start("step " + type, SpanKind.INTERNAL, tx.trace());
    String traceparent = null;
    if (span != null) {
      span.setAttribute(Tracing.TX_ID, tx.txId()).setAttribute(Tracing.PIPELINE, p.pipeline().name())
          .setAttribute(Tracing.STEP, i + 1L).setAttribute(Tracing.STEP_TYPE, type)
          .setAttribute(Tracing.ATTEMPT, (long) stepAttempt(tx, i)).setAttribute(Tracing.NODE, settings.nodeId());
      traceparent = Tracing.traceparent(span);
      run.stepTrace(traceparent);
    }
    StepContext ctx = new StepContext(tx.txId(), tx.owner(), tx.externalId(), tx.attempt(), i, type, input,
        tx.metadata(), settings.nodeId(), timeout, i == tx.step() ? tx.retry() : 0, stepAttempt(tx, i),
        tx.switches() == null ? new JsonObject() : tx.switches(), vertx, StepLog.of(stepLog, tx.txId(), i,
            settings.nodeId()),
        report -> store.progress(tx.txId(), tx.attempt(), report).compose(code -> code == Code.OK
            ? Future.<Void>succeededFuture()
            : Future.<Void>failedFuture(new IllegalStateException("progress not recorded: " + code))),
        run::cancelled, traceparent, tx.run(), p.pipeline().steps().get(i).idempotent());
    Promise<StepResult> result = Promise.promise();
    if (span != null) {
      result.future().onComplete(ar -> ended(span, ar));
    }
    long timer = vertx.setTimer(timeout.toMillis(),
        t -> result.tryFail(new StepTimeout("exceeded its timeout of " + Durations.format(timeout))));
    Future<StepResult> running;
    long began = settings.ticker().nanos();
    // log lines a step writes while it is called carry its transaction, step and node (MDC)
    MDC.put("txId", tx.txId());
    MDC.put("step", Integer.toString(i));
    MDC.put("nodeId", settings.nodeId());
    try {
      running = p.steps().get(i).run(ctx);
    } catch (Throwable e) {
      running = Future.failedFuture(e);
    } finally {
      MDC.remove("txId");
      MDC.remove("step");
      MDC.remove("nodeId");
    }
    long startedAt = settings.clock().millis();
    if (running == null) {
      running = Future.failedFuture(new IllegalStateException("the step returned no Future"));
    }
    // A step may finish on any thread; the rest of the run, its step time among it, stays on ours.
    Context home = vertx.getOrCreateContext();
    running.onComplete(ar -> {
      long nanos = settings.ticker().nanos() - began;
      metrics.step(type, nanos);
      // the node that ran it goes with the time, so the dashboard's timeline names it for every attempt
      String time = i + ":" + startedAt + ":" + nanos / 1_000_000 + ":" + settings.nodeId();
      if (Vertx.currentContext() == home) {
        settle(result, timer, ar, run, time);
      } else {
        home.runOnContext(v -> settle(result, timer, ar, run, time));
      }
    });
    return result.future();
  }

  /** A step attempt's span ends with how the attempt went (what the runner does with it comes next). */
  private static void ended(Span span, AsyncResult<StepResult> ar) {
    String outcome;
    if (ar.failed()) {
      outcome = ar.cause() instanceof StepTimeout ? "timeout" : "error";
      span.setStatus(StatusCode.ERROR, String.valueOf(ar.cause().getMessage()));
    } else {
      StepResult r = ar.result();
      outcome = r instanceof StepResult.Success ? "success" : r instanceof StepResult.Failed ? "failed"
          : r instanceof StepResult.Aborted ? "aborted" : r instanceof StepResult.Child ? "child"
          : r instanceof StepResult.Fork ? "fork" : r instanceof StepResult.Sleep ? "sleep" : "none";
      if (r instanceof StepResult.Failed f) {
        span.setStatus(StatusCode.ERROR, f.note() == null ? "failed" : f.note());
      }
    }
    span.setAttribute(Tracing.OUTCOME, outcome);
    span.end();
  }

  private void settle(Promise<StepResult> result, long timer, AsyncResult<StepResult> ar, Run run, String time) {
    if (result.future().isComplete()) {
      return; // it ran past its timeout, which has ended the transaction already
    }
    run.stepTime(time);
    vertx.cancelTimer(timer);
    if (ar.succeeded()) {
      result.tryComplete(ar.result());
    } else {
      result.tryFail(ar.cause());
    }
  }

  /** A step ran past its timeout: the runner ends the transaction timeout. */
  static final class StepTimeout extends RuntimeException {
    StepTimeout(String message) {
      super(message, null, false, false);
    }
  }
}
