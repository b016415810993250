package io.conveyor.pipeline;

import io.vertx.core.json.JsonObject;

/** What a step answers: go on with this output, or end the transaction failed or aborted. */
public sealed interface StepResult {

  record Success(JsonObject output) implements StepResult {
  }

  record Failed(String note, JsonObject output) implements StepResult {
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
