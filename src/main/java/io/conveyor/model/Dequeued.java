package io.conveyor.model;

import io.vertx.core.json.JsonObject;

/**
 * A transaction handed to this node by dequeue: which pipeline version, which step to run next and its
 * input, and the attempt that fences every write the node makes for it. unreadable is null, or says why
 * its state could not be read (the node then ends it internal-error rather than leave it stranded).
 * retry counts how often this step has run again after sleeping; switches are the values of its switches;
 * stepAttempt is the step's attempt under its retry policy (from 1); trace is the traceparent its steps'
 * spans hang under, or null (tracing was off when it started). run is which run of the transaction this is (1,
 * then 1 + its reruns: part of its steps' idempotency key); takenOver is the step it was at when a node last lost
 * it while running it (the reaper took it over, or the node stopped with it), or -1: that step may have run.
 */
public record Dequeued(String txId, long attempt, String type, String version, int step, JsonObject stepInput,
                       String owner, String externalId, JsonObject metadata, long created, String queue,
                       ChildResult child, int retry, JsonObject switches, int stepAttempt, String trace, int run,
                       int takenOver, String unreadable) {

  /** How a child pipeline this transaction waited for ended; its result stands for the step at step. */
  public record ChildResult(TxStatus status, JsonObject output, String note) {
  }

  public static Dequeued unreadable(String txId, long attempt, String why) {
    return new Dequeued(txId, attempt, null, null, 0, null, null, null, null, 0, null, null, 0, null, 1, null, 1, -1,
        why);
  }
}
