package io.conveyor.pipeline;

import io.vertx.core.json.JsonObject;

/**
 * What a step answers: go on with this output, fail (retried as the step's policy says), or end the
 * transaction aborted.
 */
public sealed interface StepResult {

  record Success(JsonObject output) implements StepResult {
  }

  /**
   * The step failed. code names the kind of failure (a retry policy's nonRetryable lists codes; "failed" when
   * the step gives none); a failure that is not retryable ends the transaction whatever the policy says, and
   * retryAfter (or null) is the least wait before the next attempt (a service's Retry-After).
   */
  record Failed(String note, JsonObject output, String code, boolean retryable, java.time.Duration retryAfter)
      implements StepResult {
    public Failed(String note, JsonObject output) {
      this(note, output, "failed", true, null);
    }
  }

  record Aborted(String note, JsonObject output) implements StepResult {
  }

  /**
   * Run a child pipeline (in its own node group) with this input; the transaction leaves the worker until
   * the child ends, and the child's status and output then stand as this step's result.
   */
  record Child(String pipeline, JsonObject input) implements StepResult {
  }

  /**
   * Run this step again later: after the duration, or as soon as the named switch changes (the duration is
   * then the fallback). The transaction leaves its worker meanwhile; the step's retry counter rises.
   */
  record Sleep(java.time.Duration duration, String switchName) implements StepResult {
  }

  /**
   * Run these branches as child transactions (each in its pipeline's group, at most maxConcurrency at once);
   * the transaction leaves the worker until the join is decided: need branches succeeded (all of them when
   * all), or one failed (unless continueOnFailure, when it fails only once need is out of reach; an all join
   * that continues on failure waits for every branch). The joined result then stands as this step's result:
   * {"outputs": [...], "statuses": [...]} in branch order.
   */
  record Fork(java.util.List<Branch> branches, int need, boolean all, boolean continueOnFailure,
              int maxConcurrency) implements StepResult {
    /** One branch: a pipeline and its input. */
    public record Branch(String pipeline, JsonObject input) {
    }
  }

  static StepResult success(JsonObject output) {
    return new Success(output == null ? new JsonObject() : output);
  }

  static StepResult failed(String note) {
    return new Failed(note, null);
  }

  static StepResult aborted(String note) {
    return new Aborted(note, null);
  }
}
