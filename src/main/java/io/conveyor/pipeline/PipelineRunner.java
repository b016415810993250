package io.conveyor.pipeline;

import io.conveyor.config.Durations;
import io.conveyor.model.Dequeued;
import io.conveyor.model.Ids;
import io.conveyor.model.RetryPolicy;
import io.conveyor.model.TxStatus;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.redis.Batcher;
import io.conveyor.redis.Code;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.RunStore;
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
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one dequeued transaction from its next step to the end: each step under its timeout, a checkpoint
 * after each step but the last, then completion. Every write carries the attempt, so a node that lost
 * the transaction to another finds its writes refused and stops.
 */
public final class PipelineRunner {
  private static final Logger log = LoggerFactory.getLogger(PipelineRunner.class);
  private static final Logger stepLog = LoggerFactory.getLogger("io.conveyor.step");
  private static final long[] RETRY_MS = {20, 100, 500, 2000, 5000};

  /** What a runner needs to know about its node. */
  public record Settings(String nodeId, Duration stepTimeout, Duration archiveDelay, java.time.Clock clock,
                         int maxPayloadBytes) {
    /** With limits.maxPayloadBytes's default. */
    public Settings(String nodeId, Duration stepTimeout, Duration archiveDelay, java.time.Clock clock) {
      this(nodeId, stepTimeout, archiveDelay, clock,
          io.conveyor.config.Config.Limits.DEFAULTS.maxPayloadBytes());
    }
  }

  private final Vertx vertx;
  private final RunStore store;
  private final PipelineStore pipelines;
  private final PipelineCatalog catalog;
  private final Settings settings;
  private final NodeMetrics metrics;
  private final Batcher<RunStore.Completion, Code> completions;
  private final Tracing tracing;
  private final OutputLimit outputs;

  /** Meant for one Vert.x context (its verticle's): every field below is touched on that context only. */
  public PipelineRunner(Vertx vertx, RunStore store, PipelineStore pipelines, PipelineCatalog catalog,
                        Settings settings, NodeMetrics metrics, Tracing tracing) {
    this.vertx = vertx;
    this.store = store;
    this.pipelines = pipelines;
    this.catalog = catalog;
    this.settings = settings;
    this.metrics = metrics;
    this.tracing = tracing;
    this.outputs = new OutputLimit(settings.maxPayloadBytes(), store::ownMaxPayloadBytes, settings.clock());
    // at most 100 a call: a script holds Redis alone while it runs (see Batcher.MAX)
    this.completions = new Batcher<>(Batcher.MAX, txs -> store.complete(settings.nodeId(), settings.archiveDelay(), txs));
  }

  /**
   * Transactions running here, each with whether its owner has asked to cancel it (ctx.cancelled()). Read by
   * steps on any thread, hence concurrent.
   */
  private final java.util.Map<String, Boolean> cancelAsked = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * The traceparent of the span of the step each transaction runs here (traced ones only): a child pipeline
   * or the branches the step starts hang under it.
   */
  private final java.util.Map<String, String> stepTraces = new java.util.concurrent.ConcurrentHashMap<>();

  /** Its owner asked to cancel a transaction (a hint from notify): a step of it running here may stop early. */
  public void cancelRequested(String txId) {
    cancelAsked.computeIfPresent(txId, (id, asked) -> true);
  }

  /** Succeeds when the transaction has left this node: completed, fenced off, or given up to recovery. */
  public Future<Void> run(Dequeued tx) {
    return run(tx, () -> { });
  }

  /**
   * As run; ending is called once, when the run's last write (its completion) has been handed to Redis: no step
   * of it runs any more, only that write is still out (see DequeueVerticle.ending).
   */
  public Future<Void> run(Dequeued tx, Runnable ending) {
    cancelAsked.put(tx.txId(), false);
    endings.put(tx, ending);
    return runOnce(tx).eventually(() -> {
      cancelAsked.remove(tx.txId());
      stepTraces.remove(tx.txId());
      Runnable e = endings.remove(tx);
      if (e != null) {
        e.run();
      }
      return Future.succeededFuture();
    });
  }

  /** The runs here whose ending has not been called yet (by run: a transaction may run here twice, see fence). */
  private final java.util.Map<Dequeued, Runnable> endings = new java.util.IdentityHashMap<>();

  private Future<Void> runOnce(Dequeued tx) {
    if (tx.unreadable() != null) {
      return finish(tx, TxStatus.INTERNAL_ERROR, null, "its state could not be read: " + tx.unreadable());
    }
    return catalog.version(pipelines, tx.type(), tx.version()).transform(ar -> {
      if (ar.failed()) {
        return finish(tx, TxStatus.INTERNAL_ERROR, null, "cannot load its pipeline: " + ar.cause().getMessage());
      }
      if (tx.child() != null && tx.child().status() == TxStatus.CANCELLED) {
        // a cancelled child is not a failure to retry: the cancel reaches its parent
        return finish(tx, TxStatus.CANCELLED, null, "its child pipeline was cancelled"
            + (tx.child().note() == null ? "" : ": " + tx.child().note()));
      }
      if (tx.child() != null && tx.step() < ar.result().steps().size()
          && "flow/parallel".equals(ar.result().pipeline().steps().get(tx.step()).type())) {
        // back from the branches of a parallel step: their join is the step's result
        Dequeued.ChildResult j = tx.child();
        return next(ar.result(), tx, tx.step(), Future.succeededFuture(j.status() == TxStatus.SUCCESS
            ? StepResult.success(j.output())
            : new StepResult.Failed(j.note(), j.output(), "branch-failed", true, null)));
      }
      if (tx.child() != null) {
        // back from a child pipeline: its result is the result of the step that started it
        return next(ar.result(), tx, tx.step(), Future.succeededFuture(childResult(tx.child())));
      }
      return runFrom(ar.result(), tx, tx.step(), tx.stepInput());
    });
  }

  private static StepResult childResult(Dequeued.ChildResult child) {
    String note = "the child pipeline ended " + child.status() + (child.note() == null ? "" : ": " + child.note());
    return switch (child.status()) {
      case SUCCESS -> StepResult.success(child.output());
      case ABORTED -> new StepResult.Aborted(note, child.output());
      default -> new StepResult.Failed(note, child.output(), "child-" + child.status().wire(), true, null);
    };
  }

  private Future<Void> runFrom(CompiledPipeline p, Dequeued tx, int i, JsonObject input) {
    if (i >= p.steps().size()) {
      return finish(tx, TxStatus.SUCCESS, input, null);
    }
    return invoke(p, tx, i, input).transform(ar -> next(p, tx, i, ar));
  }

  private Future<Void> next(CompiledPipeline p, Dequeued tx, int i, AsyncResult<StepResult> ar) {
    String step = "step " + (i + 1) + " (" + p.pipeline().steps().get(i).type() + ")";
    if (ar.failed()) {
      if (ar.cause() instanceof StepTimeout) {
        return failed(p, tx, i, new Failure(TxStatus.TIMEOUT, "timeout", step + " " + ar.cause().getMessage(),
            null, true, null));
      }
      log.warn("{} {} of {} failed with an exception", tx.txId(), step, p.pipeline().name(), ar.cause());
      return failed(p, tx, i, new Failure(TxStatus.INTERNAL_ERROR, "internal-error", step + " threw " + ar.cause(),
          null, true, null));
    }
    StepResult r = ar.result();
    JsonObject output = r instanceof StepResult.Success s ? s.output() : r instanceof StepResult.Aborted a
        ? a.output() : null;
    if (output != null) {
      return outputs.refusal(tx.owner(), output, step).compose(tooLarge -> tooLarge == null ? kept(p, tx, i, r, step)
          : failed(p, tx, i, new Failure(TxStatus.FAILED, "output-too-large", tooLarge, null, false, null)));
    }
    return kept(p, tx, i, r, step);
  }

  /** A step's result whose output (if any) may be kept. */
  private Future<Void> kept(CompiledPipeline p, Dequeued tx, int i, StepResult r, String step) {
    if (r instanceof StepResult.Success s) {
      if (i + 1 == p.steps().size()) {
        return finish(tx, TxStatus.SUCCESS, s.output(), null);
      }
      String time = stepTimes.remove(tx.txId());
      return write(tx, () -> store.checkpoint(tx.txId(), tx.attempt(), i + 1, s.output(), time)).compose(o -> switch (o) {
        case OK -> runFrom(p, tx, i + 1, s.output());
        case CANCELLED -> finish(tx, TxStatus.CANCELLED, null, "cancelled by its owner after " + step);
        default -> dropped(tx, "checkpoint", o);
      });
    }
    if (r instanceof StepResult.Failed f) {
      return failed(p, tx, i, new Failure(TxStatus.FAILED, f.code() == null ? "failed" : f.code(), f.note(),
          f.output(), f.retryable(), f.retryAfter()));
    }
    if (r instanceof StepResult.Aborted a) {
      return finish(tx, TxStatus.ABORTED, a.output(), a.note());
    }
    if (r instanceof StepResult.Child c) {
      stepTimes.remove(tx.txId()); // the step goes on in its child; its time is not this run's
      return hop(p, tx, i, c, true);
    }
    if (r instanceof StepResult.Fork f) {
      stepTimes.remove(tx.txId()); // the step goes on in its branches
      return fork(p, tx, i, f, true);
    }
    if (r instanceof StepResult.Sleep z) {
      stepTimes.remove(tx.txId()); // it runs again after sleeping; that run is timed
      return sleep(p, tx, z);
    }
    return finish(tx, TxStatus.INTERNAL_ERROR, null, step + " answered no result");
  }

  /** How an attempt of a step failed: the status it ends with if not retried, and what a policy reads. */
  private record Failure(TxStatus status, String code, String note, JsonObject output, boolean retryable,
                         Duration retryAfter) {
  }

  /** The attempt of step i under its retry policy: the stored one for the step it was dequeued at, else 1. */
  private static int stepAttempt(Dequeued tx, int i) {
    return i == tx.step() ? tx.stepAttempt() : 1;
  }

  /**
   * A failed attempt: retried off the worker when its policy allows (retry.lua), else the end of the
   * transaction. Either way the attempt's error is kept in the transaction's errors.
   */
  private Future<Void> failed(CompiledPipeline p, Dequeued tx, int i, Failure f) {
    RetryPolicy policy = p.pipeline().retryPolicy(i);
    int n = stepAttempt(tx, i);
    long now = settings.clock().millis();
    String message = f.note() == null ? f.code() : f.note().length() > 1000 ? f.note().substring(0, 1000) + "…"
        : f.note();
    JsonObject error = new JsonObject().put("step", i + 1).put("stepType", p.pipeline().steps().get(i).type())
        .put("attempt", n).put("code", f.code()).put("message", message).put("at", now)
        .put("node", settings.nodeId());
    if (!f.retryable() || !policy.retries(f.code(), n)) {
      String note = n > 1 ? message + " (attempt " + n + " of " + policy.maxAttempts() + ")" : f.note();
      return finish(tx, f.status(), f.output(), note, error);
    }
    long wait = policy.delayAfter(n, java.util.concurrent.ThreadLocalRandom.current().nextDouble()).toMillis();
    long due = now + (f.retryAfter() == null ? wait : Math.max(wait, f.retryAfter().toMillis()));
    JsonObject view = new JsonObject().put("step", i + 1).put("attempt", n + 1).put("maxAttempts", policy.maxAttempts())
        .put("nextAttemptAt", due).put("lastError", error);
    String time = stepTimes.remove(tx.txId());
    metrics.retried(p.pipeline().steps().get(i).type());
    return write(tx, () -> store.retry(tx, settings.nodeId(), due, n + 1, view, error, time)).compose(c -> switch (c) {
      case SLEEPING -> Future.<Void>succeededFuture();
      case CANCELLED -> finish(tx, TxStatus.CANCELLED, null, "cancelled by its owner after step " + (i + 1)
          + " failed", error);
      default -> dropped(tx, "retry", c);
    });
  }

  /** Runs a step; its Future, an exception it throws, and its timeout all end up in one Future. */
  private Future<StepResult> invoke(CompiledPipeline p, Dequeued tx, int i, JsonObject input) {
    Duration timeout = p.pipeline().stepTimeout(i, settings.stepTimeout());
    String type = p.pipeline().steps().get(i).type();
    Span span = tx.trace() == null ? null : tracing.start("step " + type, SpanKind.INTERNAL, tx.trace());
    String traceparent = null;
    if (span != null) {
      span.setAttribute(Tracing.TX_ID, tx.txId()).setAttribute(Tracing.PIPELINE, p.pipeline().name())
          .setAttribute(Tracing.STEP, i + 1L).setAttribute(Tracing.STEP_TYPE, type)
          .setAttribute(Tracing.ATTEMPT, (long) stepAttempt(tx, i)).setAttribute(Tracing.NODE, settings.nodeId());
      traceparent = Tracing.traceparent(span);
      stepTraces.put(tx.txId(), traceparent);
    }
    StepContext ctx = new StepContext(tx.txId(), tx.owner(), tx.externalId(), tx.attempt(), i, type, input,
        tx.metadata(), settings.nodeId(), timeout, i == tx.step() ? tx.retry() : 0, stepAttempt(tx, i),
        tx.switches() == null ? new JsonObject() : tx.switches(), vertx, StepLog.of(stepLog, tx.txId(), i,
            settings.nodeId()),
        report -> store.progress(tx.txId(), tx.attempt(), report).compose(code -> code == Code.OK
            ? Future.<Void>succeededFuture()
            : Future.<Void>failedFuture(new IllegalStateException("progress not recorded: " + code))),
        () -> Boolean.TRUE.equals(cancelAsked.get(tx.txId())), traceparent);
    Promise<StepResult> result = Promise.promise();
    if (span != null) {
      result.future().onComplete(ar -> ended(span, ar));
    }
    long timer = vertx.setTimer(timeout.toMillis(),
        t -> result.tryFail(new StepTimeout("exceeded its timeout of " + Durations.format(timeout))));
    Future<StepResult> running;
    long began = System.nanoTime();
    // log lines a step writes while it is called carry its transaction, step and node (MDC)
    org.slf4j.MDC.put("txId", tx.txId());
    org.slf4j.MDC.put("step", Integer.toString(i));
    org.slf4j.MDC.put("nodeId", settings.nodeId());
    try {
      running = p.steps().get(i).run(ctx);
    } catch (Throwable e) {
      running = Future.failedFuture(e);
    } finally {
      org.slf4j.MDC.remove("txId");
      org.slf4j.MDC.remove("step");
      org.slf4j.MDC.remove("nodeId");
    }
    long startedAt = settings.clock().millis();
    if (running == null) {
      running = Future.failedFuture(new IllegalStateException("the step returned no Future"));
    }
    // A step may finish on any thread; the rest of the run, stepTimes among it, stays on ours.
    Context home = vertx.getOrCreateContext();
    running.onComplete(ar -> {
      long nanos = System.nanoTime() - began;
      metrics.step(type, nanos);
      String time = i + ":" + startedAt + ":" + nanos / 1_000_000;
      if (Vertx.currentContext() == home) {
        settle(result, timer, ar, tx.txId(), time);
      } else {
        home.runOnContext(v -> settle(result, timer, ar, tx.txId(), time));
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

  private void settle(Promise<StepResult> result, long timer, AsyncResult<StepResult> ar, String txId,
                      String time) {
    if (result.future().isComplete()) {
      return; // it ran past its timeout, which has ended the transaction already
    }
    stepTimes.put(txId, time);
    vertx.cancelTimer(timer);
    if (ar.succeeded()) {
      result.tryComplete(ar.result());
    } else {
      result.tryFail(ar.cause());
    }
  }

  /**
   * The transaction leaves this node until it wakes. The stored step and its input are this step's already
   * (set by dequeue or by the last checkpoint), so the same step runs again.
   */
  private Future<Void> sleep(CompiledPipeline p, Dequeued tx, StepResult.Sleep z) {
    long wakeAt = settings.clock().millis() + z.duration().toMillis();
    return write(tx, () -> store.sleep(tx, settings.nodeId(), p.pipeline().nodeGroup(), wakeAt, z.switchName()))
        .compose(code -> switch (code) {
          case FENCED -> dropped(tx, "sleep", code);
          case CANCELLED -> finish(tx, TxStatus.CANCELLED, null, "cancelled by its owner before it slept");
          default -> Future.<Void>succeededFuture();
        });
  }

  /** Queues the child in its group; the parent leaves this node and waits (see hop.lua). */
  private Future<Void> hop(CompiledPipeline p, Dequeued tx, int i, StepResult.Child c, boolean mayRetry) {
    String childTxId = store.childTxId(tx.txId());
    return catalog.groupOf(pipelines, c.pipeline()).compose(group -> group == null
        ? finish(tx, TxStatus.INTERNAL_ERROR, null, "step " + (i + 1) + ": no pipeline named " + c.pipeline())
        : write(tx, () -> store.hop(tx, settings.nodeId(), i, childTxId, c.pipeline(), c.input(), group,
            stepTraces.get(tx.txId())))
            .compose(h -> switch (h.code()) {
              case OK -> Future.<Void>succeededFuture();
              case GROUP_CHANGED -> mayRetry
                  ? catalog.refreshGroup(pipelines, c.pipeline()).compose(g -> hop(p, tx, i, c, false))
                  : finish(tx, TxStatus.INTERNAL_ERROR, null, "pipeline " + c.pipeline() + " keeps changing group");
              case UNKNOWN_PIPELINE -> finish(tx, TxStatus.INTERNAL_ERROR, null,
                  "step " + (i + 1) + ": no pipeline named " + c.pipeline());
              case CANCELLED -> finish(tx, TxStatus.CANCELLED, null, "cancelled by its owner before its child "
                  + c.pipeline() + " started");
              case DEPTH_EXCEEDED, DESCENDANTS_EXCEEDED -> overLimit(p, tx, i, h.code(), h.detail(), h.limit());
              default -> dropped(tx, "hop", h.code());
            }));
  }

  /** Starts the branches of a parallel step; the parent leaves this node and waits for their join (fork.lua). */
  private Future<Void> fork(CompiledPipeline p, Dequeued tx, int i, StepResult.Fork f, boolean mayRetry) {
    java.util.List<String> ids = new java.util.ArrayList<>(f.branches().size());
    java.util.Map<String, Future<String>> groups = new java.util.LinkedHashMap<>();
    for (StepResult.Fork.Branch b : f.branches()) {
      ids.add(store.childTxId(tx.txId()));
      groups.computeIfAbsent(b.pipeline(), name -> catalog.groupOf(pipelines, name));
    }
    return Future.all(new java.util.ArrayList<>(groups.values())).compose(all -> {
      java.util.List<RunStore.Branch> branches = new java.util.ArrayList<>(ids.size());
      for (int b = 0; b < ids.size(); b++) {
        StepResult.Fork.Branch branch = f.branches().get(b);
        String g = groups.get(branch.pipeline()).result();
        if (g == null) {
          return finish(tx, TxStatus.INTERNAL_ERROR, null, "step " + (i + 1) + ": no pipeline named "
              + branch.pipeline());
        }
        branches.add(new RunStore.Branch(ids.get(b), branch.pipeline(), branch.input(), g));
      }
      RunStore.Join join = new RunStore.Join(f.need(), f.all(), f.continueOnFailure(), f.maxConcurrency());
      return write(tx, () -> store.fork(tx, settings.nodeId(), i, join, branches, stepTraces.get(tx.txId())))
          .compose(h -> switch (h.code()) {
        case OK -> Future.<Void>succeededFuture();
        case GROUP_CHANGED -> mayRetry
            ? catalog.refreshGroup(pipelines, h.pipeline()).compose(g -> fork(p, tx, i, f, false))
            : finish(tx, TxStatus.INTERNAL_ERROR, null, "pipeline " + h.pipeline() + " keeps changing group");
        case UNKNOWN_PIPELINE -> finish(tx, TxStatus.INTERNAL_ERROR, null,
            "step " + (i + 1) + ": no pipeline named " + h.pipeline());
        case CANCELLED -> finish(tx, TxStatus.CANCELLED, null, "cancelled by its owner before its branches started");
        case DEPTH_EXCEEDED, DESCENDANTS_EXCEEDED -> overLimit(p, tx, i, h.code(), h.pipeline(), h.group());
        default -> dropped(tx, "fork", h.code());
      });
    });
  }

  /** A child or branch the tree limits refused: the step fails as any failed step does, never retried. */
  private Future<Void> overLimit(CompiledPipeline p, Dequeued tx, int i, Code code, String reached, String limit) {
    return failed(p, tx, i, new Failure(TxStatus.FAILED, TreeLimits.code(code),
        TreeLimits.note(code, i, reached, limit), null, false, null));
  }

  /**
   * The last step's time of each transaction being run here ("step:startMs:durationMs"), until written.
   * Touched on the runner's context only (settle), so a plain HashMap is safe.
   */
  private final java.util.Map<String, String> stepTimes = new java.util.HashMap<>();

  private Future<Void> finish(Dequeued tx, TxStatus status, JsonObject output, String note) {
    return finish(tx, status, output, note, null);
  }

  /** Completes the transaction; a cancel asked for meanwhile wins (complete.lua answers CANCELLED). */
  private Future<Void> finish(Dequeued tx, TxStatus status, JsonObject output, String note, JsonObject error) {
    RunStore.Completion c = new RunStore.Completion(tx.txId(), tx.attempt(), status, output, note,
        stepTimes.remove(tx.txId()), error);
    Future<Code> written = write(tx, () -> completions.add(c));
    Runnable e = endings.remove(tx);
    if (e != null) {
      e.run();
    }
    return written
        .compose(o -> {
          if (o != Code.OK && o != Code.CANCELLED) {
            return dropped(tx, "completion", o);
          }
          metrics.completed(o == Code.CANCELLED ? TxStatus.CANCELLED.wire() : status.wire(), tx.owner());
          return Future.succeededFuture();
        });
  }

  private static Future<Void> dropped(Dequeued tx, String what, Code o) {
    log.info("{} attempt {}: {} refused ({}); another attempt owns it, dropping this one", tx.txId(),
        tx.attempt(), what, o);
    return Future.succeededFuture();
  }

  /**
   * A fenced write, retried for as long as Redis fails and this node lives: the worker slot stays taken,
   * so the transaction is never left processing with nobody running it. A write that lands late is
   * still fenced, so retrying never harms a transaction another node has taken over.
   */
  private <T> Future<T> write(Dequeued tx, Supplier<Future<T>> call) {
    return attempt(tx, call, 0);
  }

  private <T> Future<T> attempt(Dequeued tx, Supplier<Future<T>> call, int tries) {
    return call.get().recover(e -> {
      if (tries % 10 == 0) {
        log.warn("{}: Redis failed ({}); retrying, attempt {} so far", tx.txId(), e.getMessage(), tries + 1);
      }
      Promise<T> later = Promise.promise();
      vertx.setTimer(RETRY_MS[Math.min(tries, RETRY_MS.length - 1)], t -> attempt(tx, call, tries + 1)
          .onComplete(later));
      return later.future();
    });
  }

  private static final class StepTimeout extends RuntimeException {
    StepTimeout(String message) {
      super(message, null, false, false);
    }
  }
}
