package io.conveyor.pipeline;

import io.conveyor.model.Gate;
import io.conveyor.model.PipelineSource;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The node's memory of pipelines: compiled versions by name and version (a version never changes, so
 * they are kept), and the group each pipeline is started in (refreshed when a start finds it moved).
 */
public final class PipelineCatalog {
  private final PipelineParser parser;
  private final Map<String, CompiledPipeline> versions = new ConcurrentHashMap<>();
  private final Map<String, String> groups = new ConcurrentHashMap<>();
  /** What a start needs of each pipeline (group and gate), refreshed when start.lua says it moved or changed. */
  private final Map<String, Startable> startables = new ConcurrentHashMap<>();

  /**
   * What a start needs of a pipeline: its group and its gate, as the text pipelineH holds ("" for none: start.lua
   * compares it) and parsed (null for none).
   */
  public record Startable(String group, String gateText, Gate gate) {
  }
  /** Event name → the transaction type that starts on it (startOn), as last published through this catalog. */
  private final Map<String, String> startOn = new ConcurrentHashMap<>();

  public PipelineCatalog(PipelineParser parser) {
    this.parser = parser;
  }

  public PipelineParser parser() {
    return parser;
  }

  /**
   * Publishes a pipeline to Redis, made at publishedAt (ms), and remembers it. A newer publication stays
   * current (Published.kept names its version); the group is then read back from Redis.
   */
  public Future<PipelineSource.Published> publish(PipelineSource store, CompiledPipeline p, long publishedAt) {
    String definition = p.pipeline().toJson().encode();
    return store.putPipeline(p.pipeline().name(), p.version(), p.pipeline().nodeGroup(),
        p.pipeline().transactionType(), definition, p.pipeline().onFailure(), p.pipeline().priority(),
        p.pipeline().ratePerSecond(), p.pipeline().maxConcurrency(), p.pipeline().gateText(), publishedAt,
        p.rolloutShare())
        .compose(published -> {
          remember(p);
          startOn.values().remove(p.pipeline().name());
          if (p.pipeline().startOn() != null && p.pipeline().transactionType()) {
            startOn.put(p.pipeline().startOn(), p.pipeline().name());
          }
          if (published.kept() != null) {
            startables.remove(p.pipeline().name());
            return refreshGroup(store, p.pipeline().name()).map(published);
          }
          groups.put(p.pipeline().name(), p.pipeline().nodeGroup());
          startables.put(p.pipeline().name(), new Startable(p.pipeline().nodeGroup(), p.pipeline().gateText(),
              p.pipeline().gate()));
          return Future.succeededFuture(published);
        });
  }

  /** The transaction type a business event of this name starts when no step waits for it (startOn), or null. */
  public String startsOn(String event) {
    return startOn.get(event);
  }

  /** A version of a pipeline, from memory or from Redis; fails when Redis has no such version. */
  public Future<CompiledPipeline> version(PipelineSource store, String name, String version) {
    CompiledPipeline known = versions.get(key(name, version));
    if (known != null) {
      return Future.succeededFuture(known);
    }
    return store.pipelineDefinition(name, version).compose(json -> {
      if (json == null) {
        return Future.failedFuture(new PipelineException("pipeline " + name + " has no version " + version));
      }
      CompiledPipeline p = parser.parse(new JsonObject(json), "pipeline " + name + " version " + version);
      remember(p);
      return Future.succeededFuture(p);
    });
  }

  /** The group a pipeline is started in, or null when Redis knows no such pipeline. */
  public Future<String> groupOf(PipelineSource store, String name) {
    String g = groups.get(name);
    return g != null ? Future.succeededFuture(g) : refreshGroup(store, name);
  }

  /** The group and gate a pipeline is started with, or null when Redis knows no such pipeline. */
  public Future<Startable> startOf(PipelineSource store, String name) {
    Startable s = startables.get(name);
    return s != null ? Future.succeededFuture(s) : refreshStart(store, name);
  }

  /** The same, read from Redis again (start.lua answered that the group or the gate changed). */
  public Future<Startable> refreshStart(PipelineSource store, String name) {
    return store.pipelineStart(name).map(f -> {
      if (f == null) {
        startables.remove(name);
        return null;
      }
      Startable s = new Startable(f[0], f[1], f[1].isEmpty() ? null
          : Gate.of(new JsonObject(f[1]), "pipeline " + name + ": "));
      startables.put(name, s);
      groups.put(name, f[0]);
      return s;
    });
  }

  public Future<String> refreshGroup(PipelineSource store, String name) {
    return store.pipelineGroup(name).map(g -> {
      if (g != null) {
        groups.put(name, g);
      }
      return g;
    });
  }

  private void remember(CompiledPipeline p) {
    versions.put(key(p.pipeline().name(), p.version()), p);
  }

  private static String key(String name, String version) {
    return name + "@" + version;
  }
}
