package io.conveyor.bus;

/**
 * A node was judged dead (its heartbeat expired in Redis, or Hazelcast saw it leave) and its work taken
 * over: requeued transactions went back to the front of their queues. reapedBy is the reaper leader.
 */
public record NodeDied(String nodeId, String reason, int requeued, String reapedBy, long at) {
}
