package io.conveyor.api;

import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.StatsStore;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A pipeline's versions for the console (GET /api/v1/pipelines/{name}/versions[/{version}]): every stored version
 * listed newest first, and one version with its definition and each step's attempts and p50/p99 durations over the
 * last hour (StepStats, from the 60 s stats series), so two versions can be drawn side by side.
 */
final class PipelineVersions {
  /** The most versions one list answers (newest first); more says how many were left out. */
  static final int MAX_LISTED = 50;
  private final PipelineStore pipelines;
  private final StatsStore stats;
  private final Clock clock;

  PipelineVersions(PipelineStore pipelines, StatsStore stats, Clock clock) {
    this.pipelines = pipelines;
    this.stats = stats;
    this.clock = clock;
  }

  /** {name, current, versions: [{version, publishedAt, current, steps, description?}], more}. */
  Future<JsonObject> list(String name) {
    return Future.all(pipelines.pipelines(), pipelines.versions(name)).compose(f -> {
      JsonObject all = f.resultAt(0);
      Map<String, JsonObject> versions = f.resultAt(1);
      if (versions.isEmpty()) {
        return Future.failedFuture(notFound(name));
      }
      String current = all.getValue(name) instanceof JsonObject p ? p.getString("version") : null;
      List<Map.Entry<String, JsonObject>> sorted = new ArrayList<>(versions.entrySet());
      sorted.sort(Comparator.<Map.Entry<String, JsonObject>>comparingLong(e -> -e.getValue().getLong("publishedAt",
          Long.MIN_VALUE + 1)).thenComparing(Map.Entry::getKey));
      JsonArray out = new JsonArray();
      sorted.stream().limit(MAX_LISTED).forEach(e -> {
        JsonObject def = definition(e.getValue());
        JsonObject v = new JsonObject().put("version", e.getKey()).put("publishedAt", time(e.getValue()))
            .put("current", e.getKey().equals(current))
            .put("steps", def.getValue("steps") instanceof JsonArray s ? s.size() : 0);
        if (def.getValue("description") instanceof String d) {
          v.put("description", d);
        }
        out.add(v);
      });
      return Future.succeededFuture(new JsonObject().put("name", name).put("current", current).put("versions", out)
          .put("more", Math.max(0, sorted.size() - MAX_LISTED)));
    });
  }

  /**
   * {name, version, current, publishedAt, definition, stepStats: {step: {attempts, p50Ms, p99Ms}}, figures: {started,
   * ended, failed, p99Ms}, since}: figures over the last hour (StepStats.figures), what a rollout's canary is judged by.
   */
  Future<JsonObject> one(String name, String version) {
    if (version == null || !version.matches("[0-9a-f]{1,64}")) {
      return Future.failedFuture(TxException.invalid("version", "expected a pipeline version (hex digits, as "
          + "GET /api/v1/pipelines/" + name + "/versions lists them)"));
    }
    long since = clock.millis() - 3_600_000;
    return Future.all(pipelines.pipelines(), pipelines.versions(name), lastHour(name)).compose(f -> {
      JsonObject all = f.resultAt(0);
      JsonObject stored = f.<Map<String, JsonObject>>resultAt(1).get(version);
      if (stored == null) {
        return Future.failedFuture(new TxException(Kind.NOT_FOUND, "pipeline " + name + " has no version "
            + version, null, null));
      }
      String current = all.getValue(name) instanceof JsonObject p ? p.getString("version") : null;
      JsonObject steps = new JsonObject();
      StepStats.of(f.resultAt(2), version).forEach((step, s) -> steps.put(Integer.toString(step), s));
      return Future.succeededFuture(new JsonObject().put("name", name).put("version", version)
          .put("current", version.equals(current)).put("publishedAt", time(stored))
          .put("definition", definition(stored)).put("stepStats", steps)
          .put("figures", StepStats.figures(f.resultAt(2), version, steps))
          .put("since", Instant.ofEpochMilli(since).toString()));
    });
  }

  /** A version as graph.svg draws it: {version, nodeGroup, definition}, or a NOT_FOUND failure. */
  Future<JsonObject> drawable(String name, String version) {
    return pipelines.versions(name).compose(versions -> versions.get(version) != null
        ? Future.succeededFuture(new JsonObject().put("version", version)
            .put("definition", definition(versions.get(version)))
            .put("nodeGroup", definition(versions.get(version)).getString("nodeGroup", "")))
        : Future.failedFuture(new TxException(Kind.NOT_FOUND, "pipeline " + name + " has no version " + version,
            null, null)));
  }

  /** Each counter of the pipeline's last hour (60 s series, pipeline filter taken off), summed over its slots. */
  Future<Map<String, Long>> lastHour(String name) {
    MultiMap q = MultiMap.caseInsensitiveMultiMap().add("series", "60s").add("pipeline", name)
        .add("from", Instant.ofEpochMilli(clock.millis() - 3_600_000).toString());
    return Stats.read(stats, clock, q).map(series -> {
      Map<String, Long> total = new HashMap<>();
      for (Object slot : series.getJsonArray("slots")) {
        ((JsonObject) slot).getJsonObject("counters").forEach(e -> total.merge(e.getKey(),
            Long.parseLong(String.valueOf(e.getValue())), Long::sum));
      }
      return total;
    });
  }

  static TxException notFound(String name) {
    return new TxException(Kind.NOT_FOUND, "no pipeline " + name, null, null);
  }

  private static JsonObject definition(JsonObject stored) {
    try {
      return new JsonObject(stored.getString("definition"));
    } catch (RuntimeException e) {
      return new JsonObject();
    }
  }

  private static String time(JsonObject stored) {
    return stored.containsKey("publishedAt") ? Instant.ofEpochMilli(stored.getLong("publishedAt")).toString() : null;
  }
}
