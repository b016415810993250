package io.conveyor.pipeline;

import io.conveyor.model.Pipeline;
import java.util.List;

/**
 * A validated pipeline with its steps created, ready to run; one per version. modified is when its file was
 * last changed (ms), 0 when it did not come from a file: a publication from a file never replaces a newer one.
 * rolloutShare is its upload's or file's "rollout": {"share": n} (1-99: published as a canary taking n % of new
 * starts; lua/lib/rollout.lua), 0 for none: how it is published, not part of the version.
 */
public record CompiledPipeline(Pipeline pipeline, String version, List<Step> steps, long modified, int rolloutShare) {

  public CompiledPipeline(Pipeline pipeline, String version, List<Step> steps, long modified) {
    this(pipeline, version, steps, modified, 0);
  }

  public CompiledPipeline withModified(long ms) {
    return new CompiledPipeline(pipeline, version, steps, ms, rolloutShare);
  }

  public CompiledPipeline withRollout(int share) {
    return new CompiledPipeline(pipeline, version, steps, modified, share);
  }
}
