package io.conveyor.model;

import io.vertx.core.json.JsonObject;
import java.time.Duration;

/**
 * One step of a pipeline as written: its type, its params, an optional timeout of its own and an optional
 * retry policy of its own (null: the pipeline's). idempotent false says the step must not run again after a
 * takeover (it may have run): the transaction then ends internal-error, code maybe-ran, instead.
 */
public record StepDef(String type, JsonObject params, Duration timeout, RetryPolicy retry, boolean idempotent) {
  /** An idempotent step (the default). */
  public StepDef(String type, JsonObject params, Duration timeout, RetryPolicy retry) {
    this(type, params, timeout, retry, true);
  }
}
