package io.conveyor.queue;

import io.conveyor.config.Config;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.Dequeued;
import io.conveyor.model.RetryPolicy;
import io.conveyor.model.TxStatus;
import io.conveyor.pipeline.CompiledPipeline;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.pipeline.StepResult;
import io.conveyor.redis.Batcher;
import io.conveyor.redis.PartitionBatchers;
import io.conveyor.redis.Code;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.RunStore;
import io.conveyor.time.Ticker;
import io.conveyor.trace.Tracing;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
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
  private static final long[] RETRY_MS = {20, 100, 500, 2000, 5000};

  /** What a runner needs to know about its node; the ticker times its steps. */
  public record Settings(String nodeId, Duration stepTimeout, Duration archiveDelay, Clock clock, Ticker ticker,
                         int maxPayloadBytes) {
    /** With limits.maxPayloadBytes's default. */
    public Settings(String nodeId, Duration stepTimeout, Duration archiveDelay, Clock clock) {
      this(nodeId, stepTimeout, archiveDelay, clock, Ticker.SYSTEM, Config.Limits.DEFAULTS.maxPayloadBytes());
    }
  }

  private final Vertx vertx;
  private final RunStore store;
  private final PipelineStore pipelines;
  private final PipelineCatalog catalog;
  private final Settings settings;
  private final NodeMetrics metrics;
  private final PartitionBatchers<RunStore.Completion, Code> completions;
  private final OutputLimit outputs;
  private final StepInvoker steps;
  /**
   * The runs here by txId, for a cancel hint to find its run. Touched on the runner's context only: run and
   * cancelRequested are called there (DequeueVerticle's), so a plain HashMap is safe.
   */
  private final Map<String, Run> running = new HashMap<>();

  /** Meant for one Vert.x context (its verticle's): every field below is touched on that context only. */
  public PipelineRunner(Vertx vertx, RunStore store, PipelineStore pipelines, PipelineCatalog catalog,
                        Settings settings, NodeMetrics metrics, Tracing tracing) {
    this.vertx = vertx;
    this.store = store;
    this.pipelines = pipelines;
    this.catalog = catalog;
    this.settings = settings;
    this.metrics = metrics;
    this.steps = new StepInvoker(vertx, store, settings, metrics, tracing);
    this.outputs = new OutputLimit(settings.maxPayloadBytes(), store::ownMaxPayloadBytes, settings.clock());
    // at most 100 a call (a script holds Redis alone while it runs, see Batcher.MAX), one partition a call
    this.completions = store.completions(settings.nodeId(), settings.archiveDelay(), Batcher.MAX);
  }

  /** Its owner asked to cancel a transaction (a hint from notify): a step of it running here may stop early. */
  public void cancelRequested(String txId) {
    Run run = running.get(txId);
    if (run != null) {
      run.cancelAsked();
    }
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
    // a sealed payload is opened here, on the node; a data key Redis fails to give is asked for again (as a write)
    return write(tx, () -> store.opened(tx)).compose(open -> runOpened(open, ending));
  }

  private Future<Void> runOpened(Dequeued tx, Runnable ending) {
    Run run = new Run(tx, ending);
    running.put(tx.txId(), run);
    return runOnce(run).eventually(() -> {
      running.remove(tx.txId(), run);
      run.end();
      return Future.succeededFuture();
    });
  }

  private Future<Void> runOnce(Run run) {
    Dequeued tx = run.tx();
    if (tx.unreadable() != null) {
      return finish(run, TxStatus.INTERNAL_ERROR, null, "its state could not be read: " + tx.unreadable());
    }
    return catalog.version(pipelines, tx.type(), tx.version()).transform(ar -> {
      if (ar.failed()) {
        return finish(run, TxStatus.INTERNAL_ERROR, null, "cannot load its pipeline: " + ar.cause().getMessage());
      }
      if (tx.child() != null && tx.child().status() == TxStatus.CANCELLED) {
        // a cancelled child is not a failure to retry: the cancel reaches its parent
        return finish(run, TxStatus.CANCELLED, null, "its child pipeline was cancelled"
            + (tx.child().note() == null ? "" : ": " + tx.child().note()));
      }
      if (tx.child() != null && tx.step() < ar.result().steps().size()
          && "flow/parallel".equals(ar.result().pipeline().steps().get(tx.step()).type())) {
        // back from the branches of a parallel step: their join is the step's result
        Dequeued.ChildResult j = tx.child();
        return next(ar.result(), run, tx.step(), Future.succeededFuture(j.status() == TxStatus.SUCCESS
            ? StepResult.success(j.output())
            : new StepResult.Failed(j.note(), j.output(), "branch-failed", true, null)));
      }
      if (tx.child() != null) {
        // back from a child pipeline: its result is the result of the step that started it
        return next(ar.result(), run, tx.step(), Future.succeededFuture(childResult(tx.child())));
      }
      if (MaybeRan.applies(ar.result(), tx)) {
        String type = ar.result().pipeline().steps().get(tx.step()).type();
        metrics.maybeRan(type);
        return failed(ar.result(), run, tx.step(), new Failure(TxStatus.INTERNAL_ERROR, MaybeRan.CODE,
            MaybeRan.note(tx.step(), type), null, false, null));
      }
      return runFrom(ar.result(), run, tx.step(), tx.stepInput());
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

  private Future<Void> runFrom(CompiledPipeline p, Run run, int i, JsonObject input) {
    Dequeued tx = run.tx();
    if (i >= p.steps().size()) {
      return finish(run, TxStatus.SUCCESS, input, null);
    }
    return steps.invoke(p, run, i, input).transform(ar -> next(p, run, i, ar));
  }

  private Future<Void> next(CompiledPipeline p, Run run, int i, AsyncResult<StepResult> ar) {
    Dequeued tx = run.tx();
    String step = "step " + (i + 1) + " (" + p.pipeline().steps().get(i).type() + ")";
    if (ar.failed()) {
      if (ar.cause() instanceof StepInvoker.StepTimeout) {
        return failed(p, run, i, new Failure(TxStatus.TIMEOUT, "timeout", step + " " + ar.cause().getMessage(),
            null, true, null));
      }
      log.warn("{} {} of {} failed with an exception", tx.txId(), step, p.pipeline().name(), ar.cause());
      return failed(p, run, i, new Failure(TxStatus.INTERNAL_ERROR, "internal-error", step + " threw " + ar.cause(),
          null, true, null));
    }
    StepResult r = ar.result();
    JsonObject output = r instanceof StepResult.Success s ? s.output() : r instanceof StepResult.Aborted a
        ? a.output() : null;
    if (output != null) {
      return outputs.refusal(tx.owner(), output, step).compose(tooLarge -> tooLarge == null ? kept(p, run, i, r, step)
          : failed(p, run, i, new Failure(TxStatus.FAILED, "output-too-large", tooLarge, null, false, null)));
    }
    return kept(p, run, i, r, step);
  }

  /** A step's result whose output (if any) may be kept. */
  private Future<Void> kept(CompiledPipeline p, Run run, int i, StepResult r, String step) {
    Dequeued tx = run.tx();
    if (r instanceof StepResult.Success s) {
      if (i + 1 == p.steps().size()) {
        return finish(run, TxStatus.SUCCESS, s.output(), null);
      }
      String time = run.takeStepTime();
      return write(tx, () -> store.checkpoint(tx.owner(), tx.txId(), tx.attempt(), i + 1, s.output(), time)).compose(o -> switch (o) {
        case OK -> runFrom(p, run, i + 1, s.output());
        case CANCELLED -> finish(run, TxStatus.CANCELLED, null, "cancelled by its owner after " + step);
        case PAUSED -> Future.<Void>succeededFuture(); // paused: parked off this node until resumed (pause.lua)
        case MIGRATED -> Future.<Void>succeededFuture(); // its next step is another version's: queued (migrate.lua)
        default -> dropped(tx, "checkpoint", o);
      });
    }
    if (r instanceof StepResult.Failed f) {
      // a step that answers maybe-ran (MaybeRan) ends as the runner's own maybe-ran does: internal-error
      TxStatus ends = MaybeRan.CODE.equals(f.code()) ? TxStatus.INTERNAL_ERROR : TxStatus.FAILED;
      return failed(p, run, i, new Failure(ends, f.code() == null ? "failed" : f.code(), f.note(), f.output(),
          f.retryable(), f.retryAfter()));
    }
    if (r instanceof StepResult.Aborted a) {
      return finish(run, TxStatus.ABORTED, a.output(), a.note());
    }
    if (r instanceof StepResult.Child c) {
      run.takeStepTime(); // the step goes on in its child; its time is not this run's
      return hop(p, run, i, c, true);
    }
    if (r instanceof StepResult.Fork f) {
      run.takeStepTime(); // the step goes on in its branches
      return fork(p, run, i, f, true);
    }
    if (r instanceof StepResult.Sleep z) {
      run.takeStepTime(); // it runs again after sleeping; that run is timed
      return sleep(p, run, z);
    }
    return finish(run, TxStatus.INTERNAL_ERROR, null, step + " answered no result");
  }

  /** How an attempt of a step failed: the status it ends with if not retried, and what a policy reads. */
  private record Failure(TxStatus status, String code, String note, JsonObject output, boolean retryable,
                         Duration retryAfter) {
  }

  /**
   * A failed attempt: retried off the worker when its policy allows (retry.lua), else the end of the
   * transaction. Either way the attempt's error is kept in the transaction's errors.
   */
  private Future<Void> failed(CompiledPipeline p, Run run, int i, Failure f) {
    Dequeued tx = run.tx();
    RetryPolicy policy = p.pipeline().retryPolicy(i);
    int n = StepInvoker.stepAttempt(tx, i);
    long now = settings.clock().millis();
    String message = f.note() == null ? f.code() : f.note().length() > 1000 ? f.note().substring(0, 1000) + "…"
        : f.note();
    JsonObject error = new JsonObject().put("step", i + 1).put("stepType", p.pipeline().steps().get(i).type())
        .put("attempt", n).put("code", f.code()).put("message", message).put("at", now)
        .put("node", settings.nodeId());
    if (!f.retryable() || !policy.retries(f.code(), n)) {
      String note = n > 1 ? message + " (attempt " + n + " of " + policy.maxAttempts() + ")" : f.note();
      return finish(run, f.status(), f.output(), note, error);
    }
    long wait = policy.delayAfter(n, ThreadLocalRandom.current().nextDouble()).toMillis();
    long due = now + (f.retryAfter() == null ? wait : Math.max(wait, f.retryAfter().toMillis()));
    JsonObject view = new JsonObject().put("step", i + 1).put("attempt", n + 1).put("maxAttempts", policy.maxAttempts())
        .put("nextAttemptAt", due).put("lastError", error);
    String time = run.takeStepTime();
    metrics.retried(p.pipeline().steps().get(i).type());
    return write(tx, () -> store.retry(tx, settings.nodeId(), due, n + 1, view, error, time)).compose(c -> switch (c) {
      case SLEEPING -> Future.<Void>succeededFuture();
      case CANCELLED -> finish(run, TxStatus.CANCELLED, null, "cancelled by its owner after step " + (i + 1)
          + " failed", error);
      default -> dropped(tx, "retry", c);
    });
  }

  /**
   * The transaction leaves this node until it wakes. The stored step and its input are this step's already
   * (set by dequeue or by the last checkpoint), so the same step runs again.
   */
  private Future<Void> sleep(CompiledPipeline p, Run run, StepResult.Sleep z) {
    Dequeued tx = run.tx();
    long wakeAt = settings.clock().millis() + z.duration().toMillis();
    return write(tx, () -> store.sleep(tx, settings.nodeId(), p.pipeline().nodeGroup(), wakeAt, z.switchName()))
        .compose(code -> switch (code) {
          case FENCED -> dropped(tx, "sleep", code);
          case CANCELLED -> finish(run, TxStatus.CANCELLED, null, "cancelled by its owner before it slept");
          default -> Future.<Void>succeededFuture();
        });
  }

  /** Queues the child in its group; the parent leaves this node and waits (see hop.lua). */
  private Future<Void> hop(CompiledPipeline p, Run run, int i, StepResult.Child c, boolean mayRetry) {
    Dequeued tx = run.tx();
    String childTxId = store.childTxId(tx.txId());
    return catalog.groupOf(pipelines, c.pipeline()).compose(group -> group == null
        ? finish(run, TxStatus.INTERNAL_ERROR, null, "step " + (i + 1) + ": no pipeline named " + c.pipeline())
        : write(tx, () -> store.hop(tx, settings.nodeId(), i, childTxId, c.pipeline(), c.input(), group,
            run.stepTrace()))
            .compose(h -> switch (h.code()) {
              case OK -> Future.<Void>succeededFuture();
              case GROUP_CHANGED -> mayRetry
                  ? catalog.refreshGroup(pipelines, c.pipeline()).compose(g -> hop(p, run, i, c, false))
                  : finish(run, TxStatus.INTERNAL_ERROR, null, "pipeline " + c.pipeline() + " keeps changing group");
              case UNKNOWN_PIPELINE -> finish(run, TxStatus.INTERNAL_ERROR, null,
                  "step " + (i + 1) + ": no pipeline named " + c.pipeline());
              case CANCELLED -> finish(run, TxStatus.CANCELLED, null, "cancelled by its owner before its child "
                  + c.pipeline() + " started");
              case DEPTH_EXCEEDED, DESCENDANTS_EXCEEDED -> overLimit(p, run, i, h.code(), h.detail(), h.limit());
              default -> dropped(tx, "hop", h.code());
            }));
  }

  /** Starts the branches of a parallel step; the parent leaves this node and waits for their join (fork.lua). */
  private Future<Void> fork(CompiledPipeline p, Run run, int i, StepResult.Fork f, boolean mayRetry) {
    Dequeued tx = run.tx();
    List<String> ids = new ArrayList<>(f.branches().size());
    Map<String, Future<String>> groups = new LinkedHashMap<>();
    for (StepResult.Fork.Branch b : f.branches()) {
      ids.add(store.childTxId(tx.txId()));
      groups.computeIfAbsent(b.pipeline(), name -> catalog.groupOf(pipelines, name));
    }
    return Future.all(new ArrayList<>(groups.values())).compose(all -> {
      List<RunStore.Branch> branches = new ArrayList<>(ids.size());
      for (int b = 0; b < ids.size(); b++) {
        StepResult.Fork.Branch branch = f.branches().get(b);
        String g = groups.get(branch.pipeline()).result();
        if (g == null) {
          return finish(run, TxStatus.INTERNAL_ERROR, null, "step " + (i + 1) + ": no pipeline named "
              + branch.pipeline());
        }
        branches.add(new RunStore.Branch(ids.get(b), branch.pipeline(), branch.input(), g));
      }
      RunStore.Join join = new RunStore.Join(f.need(), f.all(), f.continueOnFailure(), f.maxConcurrency());
      return write(tx, () -> store.fork(tx, settings.nodeId(), i, join, branches, run.stepTrace()))
          .compose(h -> switch (h.code()) {
        case OK -> Future.<Void>succeededFuture();
        case GROUP_CHANGED -> mayRetry
            ? catalog.refreshGroup(pipelines, h.pipeline()).compose(g -> fork(p, run, i, f, false))
            : finish(run, TxStatus.INTERNAL_ERROR, null, "pipeline " + h.pipeline() + " keeps changing group");
        case UNKNOWN_PIPELINE -> finish(run, TxStatus.INTERNAL_ERROR, null,
            "step " + (i + 1) + ": no pipeline named " + h.pipeline());
        case CANCELLED -> finish(run, TxStatus.CANCELLED, null, "cancelled by its owner before its branches started");
        case DEPTH_EXCEEDED, DESCENDANTS_EXCEEDED -> overLimit(p, run, i, h.code(), h.pipeline(), h.group());
        default -> dropped(tx, "fork", h.code());
      });
    });
  }

  /** A child or branch the tree limits refused: the step fails as any failed step does, never retried. */
  private Future<Void> overLimit(CompiledPipeline p, Run run, int i, Code code, String reached, String limit) {
    Dequeued tx = run.tx();
    return failed(p, run, i, new Failure(TxStatus.FAILED, TreeLimits.code(code),
        TreeLimits.note(code, i, reached, limit), null, false, null));
  }

  private Future<Void> finish(Run run, TxStatus status, JsonObject output, String note) {
    return finish(run, status, output, note, null);
  }

  /** Completes the transaction; a cancel asked for meanwhile wins (complete.lua answers CANCELLED). */
  private Future<Void> finish(Run run, TxStatus status, JsonObject output, String note, JsonObject error) {
    Dequeued tx = run.tx();
    RunStore.Completion c = new RunStore.Completion(tx.txId(), tx.attempt(), status, output, note,
        run.takeStepTime(), error, tx.owner());
    Future<Code> written = write(tx, () -> completions.add(c));
    run.end();
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
}
