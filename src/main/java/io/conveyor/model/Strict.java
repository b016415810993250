package io.conveyor.model;

import io.vertx.core.json.JsonObject;
import java.util.Collection;
import java.util.TreeSet;

/** Unknown names are refused, never dropped: each refusal names the one at fault, the accepted ones, and the nearest. */
public final class Strict {
  private Strict() {
  }

  /** Refuses a field of body the set does not accept (400 invalid-input naming it). */
  public static void fields(JsonObject body, Collection<String> accepted) {
    for (String f : body.fieldNames()) {
      if (!accepted.contains(f)) {
        throw TxException.invalid(f, "unknown field" + suggestion(f, accepted) + "; accepted: "
            + String.join(", ", new TreeSet<>(accepted)));
      }
    }
  }

  /** The body, as a Future: failed with the refusal when it holds a field but these. */
  public static io.vertx.core.Future<JsonObject> only(JsonObject body, String... accepted) {
    try {
      fields(body, java.util.Set.of(accepted));
      return io.vertx.core.Future.succeededFuture(body);
    } catch (TxException e) {
      return io.vertx.core.Future.failedFuture(e);
    }
  }

  /** " (did you mean x?)" for the nearest known name within a few edits, else "". */
  public static String suggestion(String given, Collection<String> known) {
    return io.conveyor.config.Names.suggestion(given, known);
  }
}
