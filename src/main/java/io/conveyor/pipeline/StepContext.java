package io.conveyor.pipeline;

import io.vertx.core.Vertx;
import java.time.Duration;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;

/**
 * What a step is given. idempotencyKey() names one execution of a step within a run of the transaction (the same
 * across its retries, takeovers and pauses, new for an operator's rerun), so it serves as an idempotency key
 * towards other systems; step is the index from 0 (the key counts from 1); run is which run this is (1, then 1 +
 * the reruns); idempotent is false when the pipeline declares the step must not run twice (a step that cannot
 * tell whether a call took effect then answers failed with code maybe-ran, retryable false, rather than call
 * again); attempt rises each time the transaction is handed to a node, so
 * an attempt above 1 tells a step it may be running again after a recovery. timeout is this step's: the
 * runner ends the transaction timeout when it passes. retry counts this step's runs after sleeping (0 the
 * first time); stepAttempt is this step's attempt under its retry policy (1 the first time; (txId, step,
 * stepAttempt) names one try of the step); switches holds the transaction's switch values as the step runs;
 * reportProgress tells the client how far it has got; traceparent is the W3C traceparent of this step
 * attempt's span (null when tracing is off), for the step to pass on to what it calls.
 */
public record StepContext(String txId, String owner, String externalId, long attempt, int step, String stepType,
                          JsonObject input, JsonObject metadata, String nodeId, Duration timeout, int retry,
                          int stepAttempt, JsonObject switches, Vertx vertx, Logger log,
                          java.util.function.Function<JsonObject, io.vertx.core.Future<Void>> progressSink,
                          java.util.function.BooleanSupplier cancelSignal, String traceparent, int run,
                          boolean idempotent) {

  /**
   * The idempotency key of this step's side effects: {@code <txId>:<step>} (step counted from 1, as the console
   * and errors count) in the transaction's first run, {@code <txId>:<step>:r<run>} in a rerun. A receiver that
   * keeps the keys it has seen does each effect once, however often the step runs within a run.
   */
  public String idempotencyKey() {
    return key(txId, step, run);
  }

  /** The key of step (from 0) of run of txId: see idempotencyKey. */
  public static String key(String txId, int step, int run) {
    return txId + ":" + (step + 1) + (run > 1 ? ":r" + run : "");
  }

  /**
   * Whether the transaction's owner has asked to cancel it while this step runs. A long step may check it
   * and stop early; one that does not is cancelled anyway when it ends (its result is not used). It may
   * miss a cancel asked for in the moment the step began; the end of the step never does.
   */
  public boolean cancelled() {
    return cancelSignal.getAsBoolean();
  }

  /**
   * Reports progress: the report becomes the transaction's progressReport, and a transaction with a webhook
   * whose metadata says progressReports: true gets it as a progress webhook. Fails when this node no longer
   * owns the transaction.
   */
  public io.vertx.core.Future<Void> reportProgress(JsonObject report) {
    return progressSink.apply(report);
  }
}
