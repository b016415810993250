package io.conveyor.queue;

import io.conveyor.model.Dequeued;

/**
 * One run of a dequeued transaction on this node, from dequeue until it leaves: what the runner keeps about it
 * between steps. Touched on the runner's context only, but for the cancel hint, which a step reads from any
 * thread (StepContext.cancelled). A transaction may run here twice (the second after a takeover fenced the
 * first); each run has its own object, so neither sees the other's step time, trace or ending.
 */
final class Run {
  private final Dequeued tx;
  private Runnable ending;
  /** Set on the runner's context, read by a step on whatever thread it runs: hence volatile. */
  private volatile boolean cancelAsked;
  private String stepTrace;
  private String stepTime;

  Run(Dequeued tx, Runnable ending) {
    this.tx = tx;
    this.ending = ending;
  }

  Dequeued tx() {
    return tx;
  }

  /** Its owner asked to cancel it (a hint from notify): a step of it running now may stop early. */
  void cancelAsked() {
    cancelAsked = true;
  }

  boolean cancelled() {
    return cancelAsked;
  }

  /** Calls the ending once: the run's last write is out, or the run is over. */
  void end() {
    Runnable e = ending;
    ending = null;
    if (e != null) {
      e.run();
    }
  }

  /** The traceparent of the span of the step running now (traced runs only): a child or branch hangs under it. */
  String stepTrace() {
    return stepTrace;
  }

  void stepTrace(String traceparent) {
    stepTrace = traceparent;
  }

  /** The last step's time ("step:startMs:durationMs") until a write takes it; null once taken. */
  String takeStepTime() {
    String t = stepTime;
    stepTime = null;
    return t;
  }

  void stepTime(String time) {
    stepTime = time;
  }
}
