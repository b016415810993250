package io.conveyor.bus;

/** A transaction ended with a final status (as the Redis notify channel told this node). */
public record TxCompleted(String txId, String status) {
}
