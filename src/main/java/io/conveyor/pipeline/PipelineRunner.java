package io.conveyor.pipeline;

import io.conveyor.config.Durations;
import io.conveyor.model.Dequeued;
import io.conveyor.model.Ids;
import io.conveyor.model.TxStatus;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.redis.Batcher;
import io.conveyor.redis.Code;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.RunStore;
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
  public record Settings(String nodeId, Duration stepTimeout, Duration archiveDelay, java.time.Clock clock) {
  }

  private final Vertx vertx;
  private final RunStore store;
  private final PipelineStore pipelines;
  private final PipelineCatalog catalog;
  private final Settings settings;
  private final NodeMetrics metrics;
  private final Batcher<RunStore.Completion, Code> completions;

  /** Meant for one Vert.x context (its verticle's): every field below is touched on that context only. */
  public PipelineRunner(Vertx vertx, RunStore store, PipelineStore pipelines, PipelineCatalog catalog,
                        Settings settings, NodeMetrics metrics) {
    this.vertx = vertx;
    this.store = store;
    this.pipelines = pipelines;
    this.catalog = catalog;
    this.settings = settings;
    this.metrics = metrics;
    this.completions = new Batcher<>(500, txs -> store.complete(settings.nodeId(), settings.archiveDelay(), txs));
  }

  /** Succeeds when the transaction has left this node: completed, fenced off, or given up to recovery. */
  public Future<Void> run(Dequeued tx) {
    if (tx.unreadable() != null) {
      return finish(tx, TxStatus.INTERNAL_ERROR, null, "its state could not be read: " + tx.unreadable());
    }
    return catalog.version(pipelines, tx.type(), tx.version()).transform(ar -> {
      if (ar.failed()) {
        return finish(tx, TxStatus.INTERNAL_ERROR, null, "cannot load its pipeline: " + ar.cause().getMessage());
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
      default -> new StepResult.Failed(note, child.output());
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
        return finish(tx, TxStatus.TIMEOUT, null, step + " " + ar.cause().getMessage());
      }
      log.warn("{} {} of {} failed with an exception", tx.txId(), step, p.pipeline().name(), ar.cause());
      return finish(tx, TxStatus.INTERNAL_ERROR, null, step + " threw " + ar.cause());
    }
    StepResult r = ar.result();
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
      return finish(tx, TxStatus.FAILED, f.output(), f.note());
    }
    if (r instanceof StepResult.Aborted a) {
      return finish(tx, TxStatus.ABORTED, a.output(), a.note());
    }
    if (r instanceof StepResult.Child c) {
      stepTimes.remove(tx.txId()); // the step goes on in its child; its time is not this run's
      return hop(tx, i, c, true);
    }
    if (r instanceof StepResult.Sleep z) {
      stepTimes.remove(tx.txId()); // it runs again after sleeping; that run is timed
      return sleep(p, tx, z);
    }
    return finish(tx, TxStatus.INTERNAL_ERROR, null, step + " answered no result");
  }

  /** Runs a step; its Future, an exception it throws, and its timeout all end up in one Future. */
  private Future<StepResult> invoke(CompiledPipeline p, Dequeued tx, int i, JsonObject input) {
    Duration timeout = p.pipeline().stepTimeout(i, settings.stepTimeout());
    String type = p.pipeline().steps().get(i).type();
    StepContext ctx = new StepContext(tx.txId(), tx.owner(), tx.externalId(), tx.attempt(), i, type, input,
        tx.metadata(), settings.nodeId(), timeout, i == tx.step() ? tx.retry() : 0,
        tx.switches() == null ? new JsonObject() : tx.switches(), vertx, StepLog.of(stepLog, tx.txId(), i,
            settings.nodeId()),
        report -> store.progress(tx.txId(), tx.attempt(), report).compose(code -> code == Code.OK
            ? Future.<Void>succeededFuture()
            : Future.<Void>failedFuture(new IllegalStateException("progress not recorded: " + code))));
    Promise<StepResult> result = Promise.promise();
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
        .compose(code -> code == Code.FENCED ? dropped(tx, "sleep", code) : Future.succeededFuture());
  }

  /** Queues the child in its group; the parent leaves this node and waits (see hop.lua). */
  private Future<Void> hop(Dequeued tx, int i, StepResult.Child c, boolean mayRetry) {
    String childTxId = Ids.txId();
    return catalog.groupOf(pipelines, c.pipeline()).compose(group -> group == null
        ? finish(tx, TxStatus.INTERNAL_ERROR, null, "step " + (i + 1) + ": no pipeline named " + c.pipeline())
        : write(tx, () -> store.hop(tx, settings.nodeId(), i, childTxId, c.pipeline(), c.input(), group))
            .compose(h -> switch (h.code()) {
              case OK -> Future.<Void>succeededFuture();
              case GROUP_CHANGED -> mayRetry
                  ? catalog.refreshGroup(pipelines, c.pipeline()).compose(g -> hop(tx, i, c, false))
                  : finish(tx, TxStatus.INTERNAL_ERROR, null, "pipeline " + c.pipeline() + " keeps changing group");
              case UNKNOWN_PIPELINE -> finish(tx, TxStatus.INTERNAL_ERROR, null,
                  "step " + (i + 1) + ": no pipeline named " + c.pipeline());
              default -> dropped(tx, "hop", h.code());
            }));
  }

  /**
   * The last step's time of each transaction being run here ("step:startMs:durationMs"), until written.
   * Touched on the runner's context only (settle), so a plain HashMap is safe.
   */
  private final java.util.Map<String, String> stepTimes = new java.util.HashMap<>();

  private Future<Void> finish(Dequeued tx, TxStatus status, JsonObject output, String note) {
    RunStore.Completion c = new RunStore.Completion(tx.txId(), tx.attempt(), status, output, note,
        stepTimes.remove(tx.txId()));
    return write(tx, () -> completions.add(c))
        .compose(o -> {
          if (o != Code.OK) {
            return dropped(tx, "completion", o);
          }
          metrics.completed(status.wire(), tx.owner());
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
