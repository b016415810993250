package io.conveyor.api;

import io.conveyor.model.TxException;
import io.conveyor.redis.StatsStore;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Reads the stats series (stats1H/2H/3H, see lib/stats.lua) for GET /api/v1/stats: series=5s|60s|600s,
 * from and to (ISO-8601; by default the last 60 slots), and at most one of group, pipeline, owner. Each
 * slot lists its counters: in total, or for the one group, pipeline or owner asked for. For a group, latency sums
 * its step attempts' durations over the slots read (p50 and p99).
 */
public final class Stats {
  private static final int MAX_SLOTS = 720;
  private static final String ATTEMPT_MS = "attemptms.";

  private Stats() {
  }

  public static Future<JsonObject> read(StatsStore store, Clock clock, MultiMap params) {
    String series = params.get("series") == null ? "5s" : params.get("series");
    int index;
    long slotMs;
    switch (series) {
      case "5s" -> { index = 1; slotMs = 5_000; }
      case "60s" -> { index = 2; slotMs = 60_000; }
      case "600s" -> { index = 3; slotMs = 600_000; }
      default -> {
        return Future.failedFuture(TxException.invalid("series", "expected 5s, 60s or 600s"));
      }
    }
    String dimension = null;
    String value = null;
    for (String d : List.of("group", "pipeline", "owner")) {
      if (params.get(d) != null) {
        if (dimension != null) {
          return Future.failedFuture(TxException.invalid(d, "give at most one of group, pipeline and owner"));
        }
        dimension = d;
        value = params.get(d);
      }
    }
    long to;
    long from;
    try {
      to = params.get("to") == null ? clock.millis() : Instant.parse(params.get("to")).toEpochMilli();
      from = params.get("from") == null ? to - 59 * slotMs : Instant.parse(params.get("from")).toEpochMilli();
    } catch (DateTimeParseException e) {
      return Future.failedFuture(TxException.invalid("from", "expected ISO-8601 times, e.g. 2026-11-22T10:00:00Z"));
    }
    long first = from - Math.floorMod(from, slotMs);
    long last = to - Math.floorMod(to, slotMs);
    if (last < first) {
      return Future.failedFuture(TxException.invalid("from", "must not be after to"));
    }
    if ((last - first) / slotMs + 1 > MAX_SLOTS) {
      return Future.failedFuture(TxException.invalid("from", "at most " + MAX_SLOTS + " slots at once"));
    }
    List<Long> slots = new ArrayList<>();
    for (long t = first; t <= last; t += slotMs) {
      slots.add(t);
    }
    String suffix = dimension == null ? null : "|" + dimension + "=" + value;
    String dim = dimension;
    String val = value;
    return store.stats(index, slots).map(hashes -> {
      JsonArray out = new JsonArray();
      for (int i = 0; i < slots.size(); i++) {
        JsonObject counters = new JsonObject();
        hashes.get(i).forEach(e -> {
          String f = e.getKey();
          if (suffix == null ? !f.contains("|") : f.endsWith(suffix)) {
            counters.put(suffix == null ? f : f.substring(0, f.length() - suffix.length()), e.getValue());
          }
        });
        out.add(new JsonObject().put("start", Instant.ofEpochMilli(slots.get(i)).toString()).put("counters", counters));
      }
      JsonObject answer = new JsonObject().put("series", series).put("slotSeconds", slotMs / 1000).put("slots", out);
      if (dim != null) {
        answer.put("filter", new JsonObject().put(dim, val));
      }
      if ("group".equals(dim)) {
        answer.put("latency", latency(out));
      }
      return answer;
    });
  }

  /**
   * A group's latency over the slots read: its step attempts (attemptms.<bound>, lib/stats.lua stats_step_times)
   * summed, {attempts, p50Ms, p99Ms}, each quantile the upper bound of its bucket (null: none ran, or the open last
   * bucket), as StepStats reads a step's.
   */
  static JsonObject latency(JsonArray slots) {
    TreeMap<Long, Long> byBound = new TreeMap<>();
    for (int i = 0; i < slots.size(); i++) {
      slots.getJsonObject(i).getJsonObject("counters").forEach(e -> {
        if (e.getKey().startsWith(ATTEMPT_MS)) {
          String bound = e.getKey().substring(ATTEMPT_MS.length());
          try {
            byBound.merge(bound.equals("inf") ? Long.MAX_VALUE : Long.parseLong(bound),
                Long.parseLong(String.valueOf(e.getValue())), Long::sum);
          } catch (NumberFormatException ignored) {
            // not a field stats_step_times writes
          }
        }
      });
    }
    long total = byBound.values().stream().mapToLong(Long::longValue).sum();
    return new JsonObject().put("attempts", total)
        .put("p50Ms", total == 0 ? null : StepStats.quantile(byBound, total, 0.50))
        .put("p99Ms", total == 0 ? null : StepStats.quantile(byBound, total, 0.99));
  }
}
