package io.conveyor.model;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.Collection;
import java.util.Set;
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
  public static Future<JsonObject> only(JsonObject body, String... accepted) {
    try {
      fields(body, Set.of(accepted));
      return Future.succeededFuture(body);
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
  }

  /** " (did you mean x?)" for the nearest known name within a few edits, else "". */
  public static String suggestion(String given, Collection<String> known) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String k : known) {
      int d = distance(given.toLowerCase(), k.toLowerCase());
      if (d < bestDistance) {
        best = k;
        bestDistance = d;
      }
    }
    return best != null && bestDistance <= Math.max(2, given.length() / 3) ? " (did you mean " + best + "?)" : "";
  }

  /** Levenshtein distance. */
  static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
