package io.conveyor;

import io.conveyor.config.Config;
import io.conveyor.pipeline.ChildCycles;
import io.conveyor.pipeline.CompiledPipeline;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.redis.LayoutStore;
import io.conveyor.redis.OwnerStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.QueueStore;
import io.conveyor.redis.ScheduleStore;
import io.conveyor.redis.Scripts;
import io.conveyor.redis.StoreContext;
import io.conveyor.schedule.ScheduleFiles;
import io.vertx.core.Future;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a node puts into Redis, for Node: the scripts, its pipelines and schedules (checked against what Redis
 * holds), the owners' and pipelines' copies in every partition, and its group's queues upgraded; and the same
 * again, as far as Redis lost it, after Redis came back.
 */
final class Publication {
  private static final Logger log = LoggerFactory.getLogger(Publication.class);
  private final Config config;
  private final PipelineCatalog catalog;
  private final Scripts scripts;
  /** The pipelines of the node's files: what it publishes at start, and again if Redis comes back without. */
  private final List<CompiledPipeline> ownPipelines;

  Publication(Config config, PipelineCatalog catalog, Scripts scripts, List<CompiledPipeline> ownPipelines) {
    this.config = config;
    this.catalog = catalog;
    this.scripts = scripts;
    this.ownPipelines = List.copyOf(ownPipelines);
  }

  /** The names of the node's own pipelines (readiness checks they are in Redis). */
  List<String> names() {
    return ownPipelines.stream().map(p -> p.pipeline().name()).toList();
  }

  /**
   * At start: the scripts loaded, the keyspace's layout checked, the node's pipelines published (each checked for
   * the pipelines it names), the copies made, the schedules published, and the group's old queues upgraded.
   */
  Future<Void> prepare(StoreContext r, List<ScheduleFiles.Loaded> schedules) {
    PipelineStore store = new PipelineStore(r);
    return scripts.loadAll(r.link())
        .recover(e -> Future.failedFuture(new IllegalStateException("cannot load the Lua scripts into Redis at "
            + io.conveyor.config.MaskedUrl.of(config.redis().url()) + ": " + e.getMessage(), e)))
        .compose(v -> new LayoutStore(r).check())
        .compose(v -> Future.all(ownPipelines.stream().map(p -> catalog.publish(store, p, p.modified())
            .onSuccess(published -> {
              if (published.kept() != null) {
                log.info("pipeline {}: kept version {}, published after {} was last changed (its version {})",
                    p.pipeline().name(), published.kept(), config.pipelines().dir(), p.version());
              }
            })).toList()))
        .compose(v -> store.copyAll())
        .compose(v -> new OwnerStore(r).copyAll())
        .compose(v -> store.pipelines().onSuccess(known -> ownPipelines.forEach(p -> {
          List<String> missing = p.pipeline().references().stream().filter(ref -> !known.containsKey(ref)).toList();
          if (!missing.isEmpty()) {
            log.warn("pipeline {} names pipelines not published: {} (a step that reaches one fails internal-error "
                + "until it is published)", p.pipeline().name(), missing);
          }
        })).onSuccess(known -> ChildCycles.through(names(),
            ChildCycles.graph(known)).forEach(cycle -> log.warn("child pipelines form a cycle: {} "
                + "(a recursion that does not end by itself fails with depth-exceeded at limits.maxDepth {})", cycle,
                config.limits().maxDepth()))))
        .compose(v -> ScheduleFiles.publish(new ScheduleStore(r), schedules, r.clock().millis()))
        .<Void>mapEmpty()
        .eventually(r::close);
  }

  /**
   * After Redis came back (restarted, failed over, or empty): the scripts are loaded again at once (so
   * readiness holds and the first calls need no fallback), and each of this node's pipelines that Redis no
   * longer knows is published again. A pipeline Redis still knows is left as it is (an admin may have put a
   * newer version).
   */
  Future<Void> restore(StoreContext r) {
    PipelineStore store = new PipelineStore(r);
    return scripts.loadAll(r.link())
        .compose(v -> Future.all(ownPipelines.stream().map(p -> store.pipelineGroup(p.pipeline().name())
            .compose(group -> {
              if (group != null) {
                return Future.succeededFuture();
              }
              log.warn("Redis has lost pipeline {}: publishing it again from {}", p.pipeline().name(),
                  config.pipelines().dir());
              return catalog.publish(store, p, p.modified()).mapEmpty();
            })).toList()))
        // a partition's master may have failed over without the copies the last publication made
        .compose(v -> store.copyAll())
        .compose(v -> new OwnerStore(r).copyAll())
        .mapEmpty();
  }
}
