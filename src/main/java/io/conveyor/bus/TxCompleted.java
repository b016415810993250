package io.conveyor.bus;

/** A transaction ended with a final status (as the Redis notify channel told this node). */
public record TxCompleted(String txId, String status) {
  /**
   * The message body, as Messages.encode gives it, built directly: every completion of the cluster passes
   * through each node's notify verticle, and Jackson's conversion was a part of its cost.
   */
  public io.vertx.core.json.JsonObject toJson() {
    return new io.vertx.core.json.JsonObject().put("txId", txId).put("status", status);
  }
}
