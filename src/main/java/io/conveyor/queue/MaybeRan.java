package io.conveyor.queue;

import io.conveyor.model.Dequeued;
import io.conveyor.pipeline.CompiledPipeline;
import io.vertx.core.json.JsonObject;

/**
 * The at-most-once rule for steps declared "idempotent": false (docs/decisions.md, issue 33): a transaction
 * dequeued at such a step after a node was lost while it was at that step (takenOver) may have had the step run,
 * so the step is not called again and the transaction ends internal-error with code maybe-ran. A step may answer
 * that code itself (an eventbus request unanswered while the cluster view changed): it ends the same way.
 */
final class MaybeRan {
  static final String CODE = "maybe-ran";

  private MaybeRan() {
  }

  /** Whether the step tx was dequeued at must not be called: a node was lost at it and it is not idempotent. */
  static boolean applies(CompiledPipeline p, Dequeued tx) {
    return tx.takenOver() == tx.step() && tx.step() < p.steps().size()
        && !p.pipeline().steps().get(tx.step()).idempotent();
  }

  /** The transaction's note: which step, and what an operator does about it. */
  static String note(int i, String type) {
    return "step " + (i + 1) + " (" + type + ") may have run on a node that was lost while running it, and is "
        + "declared not idempotent: not run again (retry the transaction once its effect is checked)";
  }
}
