package io.conveyor.pipeline;

/** An invalid pipeline definition; the message names the source, the step and the problem. */
public final class PipelineException extends RuntimeException {
  public PipelineException(String message) {
    super(message);
  }
}
