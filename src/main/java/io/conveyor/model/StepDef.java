package io.conveyor.model;

import io.vertx.core.json.JsonObject;
import java.time.Duration;

/**
 * One step of a pipeline as written: its type, its params, an optional timeout of its own and an optional
 * retry policy of its own (null: the pipeline's).
 */
public record StepDef(String type, JsonObject params, Duration timeout, RetryPolicy retry) {
}
