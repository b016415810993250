package io.conveyor.api;

/** Every event-bus address Conveyor answers on or publishes to. */
public final class Addresses {
  /** Start a transaction: {type, owner, externalId?, metadata?, input?} → its summary. */
  public static final String TX_START = "conveyor.tx.start";
  /** Read a transaction: {txId, owner} → its summary; another owner's txId is not found, like an unknown one. */
  public static final String TX_STATUS = "conveyor.tx.status";

  /**
   * Cancel a transaction: {txId, owner} → its summary (cancelled, or still running when it will stop at its
   * next step boundary); an ended one fails 409 already-final.
   */
  public static final String TX_CANCEL = "conveyor.tx.cancel";
  /** Set a switch: {txId, owner, name, value} → the summary; a transaction sleeping on it wakes at once. */
  public static final String TX_SWITCH = "conveyor.tx.switch";
  /** Published on each node (local only) when any transaction completes: {txId, status}. */
  public static final String TX_COMPLETED = "conveyor.tx.completed";
  /** Local only: a webhook became due (the body is its id); wakes this node's webhook leader. */
  public static final String WEBHOOKS_DUE = "conveyor.internal.webhooks.due";

  /** Published on each node (local only) when one of this owner's transactions completes: {txId, status}. */
  public static String completedFor(String owner) {
    return TX_COMPLETED + "." + owner;
  }

  private Addresses() {
  }
}
