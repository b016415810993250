package io.conveyor.pipeline.steps;

import io.conveyor.model.Durations;
import io.conveyor.model.Strict;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;

/** Reading step params with messages that name the param and the expected form. */
final class Params {
  private Params() {
  }

  /** Refuses a param the step does not know, naming the ones it does. */
  static void known(JsonObject params, Set<String> names) {
    for (String f : params.fieldNames()) {
      if (!names.contains(f)) {
        throw new IllegalArgumentException("unknown param '" + f + "'" + Strict.suggestion(f, names)
            + " (expected " + String.join(", ", new TreeSet<>(names)) + ")");
      }
    }
  }

  static JsonObject object(JsonObject params, String name) {
    Object v = params.getValue(name);
    if (!(v instanceof JsonObject o)) {
      throw new IllegalArgumentException("params." + name + ": expected a JSON object");
    }
    return o;
  }

  static Duration duration(JsonObject params, String name, Duration max) {
    return Durations.read("params." + name, params.getValue(name), max);
  }

  static String text(JsonObject params, String name, String fallback) {
    Object v = params.getValue(name, fallback);
    if (!(v instanceof String s)) {
      throw new IllegalArgumentException("params." + name + ": expected a string");
    }
    return s;
  }

  /** A whole number from min to max, or the fallback when the param is absent. */
  static int integer(JsonObject params, String name, int fallback, int min, int max) {
    Object v = params.getValue(name, fallback);
    if (!(v instanceof Integer i) || i < min || i > max) {
      throw new IllegalArgumentException("params." + name + ": expected a whole number from " + min + " to " + max
          + ", got " + v);
    }
    return i;
  }

  static boolean bool(JsonObject params, String name) {
    Object v = params.getValue(name, false);
    if (!(v instanceof Boolean b)) {
      throw new IllegalArgumentException("params." + name + ": expected true or false");
    }
    return b;
  }
}
