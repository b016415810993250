package io.conveyor.model;

import io.vertx.core.json.JsonObject;
import java.time.Duration;

/** One step of a pipeline as written: its type, its params, and an optional timeout of its own. */
public record StepDef(String type, JsonObject params, Duration timeout) {
}
