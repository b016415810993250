package io.conveyor.pipeline;

import io.conveyor.model.Pipeline;
import java.util.List;

/** A validated pipeline with its steps created, ready to run; one per version. */
public record CompiledPipeline(Pipeline pipeline, String version, List<Step> steps) {
}
