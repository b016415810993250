package io.conveyor.api;

import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.TreeMap;

/**
 * Per-step numbers of one pipeline version from its stats counters (lua/lib/stats.lua stats_step_times): the
 * counters stepms.<version>.<step>.<bound> count the step's attempts whose duration was at most bound ms (and above
 * the next lower bound; inf: above the largest). p50 and p99 are read as the upper bound of the bucket that holds
 * them, so "p99 200" says 99 % of the attempts took at most 200 ms; null when it lies in the open last bucket.
 */
final class StepStats {
  private static final String PREFIX = "stepms.";

  private StepStats() {
  }

  /**
   * counters: a pipeline's stats summed over a window, with the pipeline filter taken off the names (as Stats
   * answers them for pipeline=…); version: the version asked for. Step (from 1) → {attempts, p50Ms, p99Ms}.
   */
  static Map<Integer, JsonObject> of(Map<String, Long> counters, String version) {
    String prefix = PREFIX + version + ".";
    // step → bound (Long.MAX_VALUE for inf) → count
    Map<Integer, TreeMap<Long, Long>> buckets = new TreeMap<>();
    counters.forEach((name, n) -> {
      if (!name.startsWith(prefix) || n == null || n <= 0) {
        return;
      }
      String[] parts = name.substring(prefix.length()).split("\\.");
      if (parts.length != 2) {
        return;
      }
      try {
        long bound = parts[1].equals("inf") ? Long.MAX_VALUE : Long.parseLong(parts[1]);
        buckets.computeIfAbsent(Integer.parseInt(parts[0]), s -> new TreeMap<>()).merge(bound, n, Long::sum);
      } catch (NumberFormatException e) {
        // not a field this class writes
      }
    });
    Map<Integer, JsonObject> out = new TreeMap<>();
    buckets.forEach((step, byBound) -> {
      long total = byBound.values().stream().mapToLong(Long::longValue).sum();
      out.put(step, new JsonObject().put("attempts", total).put("p50Ms", quantile(byBound, total, 0.50))
          .put("p99Ms", quantile(byBound, total, 0.99)));
    });
    return out;
  }

  /**
   * A version's figures from its counters (lua/lib/stats.lua stats_version) and its steps (as of answers them):
   * {started (starts that ran on it: vstarted.<version>), ended (vended.<version>.<status>), failed (ended other than
   * success or cancelled), p99Ms (the slowest step's p99; null when none ran, or one lies in the open last bucket)}.
   */
  static JsonObject figures(Map<String, Long> counters, String version, JsonObject steps) {
    String ended = "vended." + version + ".";
    long done = 0;
    long failed = 0;
    for (Map.Entry<String, Long> e : counters.entrySet()) {
      if (e.getKey().startsWith(ended) && e.getValue() != null) {
        String status = e.getKey().substring(ended.length());
        done += e.getValue();
        failed += status.equals("success") || status.equals("cancelled") ? 0 : e.getValue();
      }
    }
    Long p99 = null;
    boolean open = false;
    for (String step : steps.fieldNames()) {
      Long p = steps.getJsonObject(step).getLong("p99Ms");
      open |= p == null;
      p99 = p == null ? p99 : p99 == null ? p : Math.max(p99, p);
    }
    return new JsonObject().put("started", counters.getOrDefault("vstarted." + version, 0L)).put("ended", done)
        .put("failed", failed).put("p99Ms", open ? null : p99);
  }

  /** The upper bound of the bucket holding quantile q (null: the open last bucket). */
  static Long quantile(TreeMap<Long, Long> byBound, long total, double q) {
    long rank = Math.max(1, (long) Math.ceil(q * total));
    long seen = 0;
    for (Map.Entry<Long, Long> e : byBound.entrySet()) {
      seen += e.getValue();
      if (seen >= rank) {
        return e.getKey() == Long.MAX_VALUE ? null : e.getKey();
      }
    }
    return null;
  }

  /** "12 attempts · p50 ≤ 5 ms · p99 ≤ 200 ms" for a drawing's label. */
  static String label(JsonObject s) {
    return s.getLong("attempts") + (s.getLong("attempts") == 1 ? " attempt" : " attempts") + " · p50 "
        + bound(s.getLong("p50Ms")) + " · p99 " + bound(s.getLong("p99Ms"));
  }

  private static String bound(Long ms) {
    if (ms == null) {
      return "> 33 min";
    }
    return "≤ " + (ms < 1000 ? ms + " ms" : ms < 60_000 ? ms / 1000 + " s"
        : String.format(java.util.Locale.ROOT, "%.1f min", ms / 60_000.0));
  }
}
