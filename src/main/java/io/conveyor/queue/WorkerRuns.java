package io.conveyor.queue;

import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.Dequeued;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * Runs what the worker slots took, and frees each slot as soon as its run hands its completion to Redis: the
 * next take then goes out together with that write rather than after it (one round trip per run instead of
 * two). The run stays in the slots' running set (and in inflightZ) until the write lands. Used by the dequeue
 * verticle on its own context; the runner brings every result back there.
 */
final class WorkerRuns {
  private final PipelineRunner runner;
  private final WorkerSlots slots;
  private final NodeMetrics metrics;
  private final Clock clock;
  /** A slot went free (a run ended, or its write landed): the verticle takes again, or ends its drain. */
  private final Runnable freed;
  /** Inside run: a run that ends there frees its slot, and the caller of run takes again when it is done. */
  private boolean inRun;

  WorkerRuns(PipelineRunner runner, WorkerSlots slots, NodeMetrics metrics, Clock clock, Runnable freed) {
    this.runner = runner;
    this.slots = slots;
    this.metrics = metrics;
    this.clock = clock;
    this.freed = freed;
  }

  /** Runs these, each in a slot already counted (WorkerSlots.taken or unreserve). */
  void run(List<Dequeued> txs) {
    long now = clock.millis();
    for (Dequeued tx : txs) {
      if (tx.attempt() == 1 && tx.unreadable() == null) {
        metrics.dequeueWait(Duration.ofMillis(now - tx.created()));
      }
    }
    // all of them are running before any starts: a run that ends at once must not see the others as not run
    // (a put-back of what is held but not run would take them), nor take again before the caller decides
    slots.running(txs);
    inRun = true;
    try {
      for (Dequeued tx : txs) {
        boolean[] ended = {false};
        runner.run(tx, () -> {
          ended[0] = true;
          ending();
        }).onComplete(done -> release(tx, ended[0]));
      }
    } finally {
      inRun = false;
    }
    metrics.workersBusy(slots.busy());
  }

  private void ending() {
    slots.ended();
    if (!inRun) {
      freed.run();
    }
  }

  private void release(Dequeued tx, boolean ended) {
    slots.released(tx, ended);
    metrics.workersBusy(slots.busy());
    freed.run();
  }
}
