package io.conveyor.model;

import io.vertx.core.Future;

/**
 * The shared store of published pipelines, as the pipeline catalog reads and writes it; redis/PipelineStore
 * implements it. It sits in model rather than in pipeline/ because the stores never depend on pipeline/ (the
 * layers' rule) while both may see model: so pipeline/ needs nothing from redis/, and its callers pass their
 * store unchanged.
 */
public interface PipelineSource {
  /** How a publication went: the current version changed, was this one already, or a newer one was kept. */
  record Published(boolean changed, String kept) {
  }

  /**
   * Publishes a version made at publishedAt (ms): it becomes current unless a newer publication is; its
   * definition is stored either way.
   */
  default Future<Published> putPipeline(String name, String version, String group, boolean transactionType,
                                        String definition, String onFailure, int priority, double ratePerSecond,
                                        int maxConcurrency, String gate, long publishedAt) {
    return putPipeline(name, version, group, transactionType, definition, onFailure, priority, ratePerSecond,
        maxConcurrency, gate, publishedAt, 0);
  }

  /**
   * The same as a rollout's canary when rolloutShare is 1-99 (lua/lib/rollout.lua): it takes that % of new starts,
   * the version current before the rest. A rollout that cannot be fails with an invalid-field TxException (rollout).
   */
  Future<Published> putPipeline(String name, String version, String group, boolean transactionType,
                                String definition, String onFailure, int priority, double ratePerSecond,
                                int maxConcurrency, String gate, long publishedAt, int rolloutShare);

  /** The definition JSON of one version of a pipeline, or null. */
  Future<String> pipelineDefinition(String name, String version);

  /**
   * What a start needs of a pipeline: {node group, gate text (pipelineH field gate, "" for none)}, or null when
   * there is no such pipeline.
   */
  Future<String[]> pipelineStart(String name);

  /** The node group a pipeline currently belongs to, or null when there is no such pipeline. */
  Future<String> pipelineGroup(String name);
}
