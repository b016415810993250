package io.conveyor.pipeline;

import io.conveyor.model.Pipeline;
import java.util.List;

/**
 * A validated pipeline with its steps created, ready to run; one per version. modified is when its file was
 * last changed (ms), 0 when it did not come from a file: a publication from a file never replaces a newer one.
 */
public record CompiledPipeline(Pipeline pipeline, String version, List<Step> steps, long modified) {

  public CompiledPipeline withModified(long ms) {
    return new CompiledPipeline(pipeline, version, steps, ms);
  }
}
