package io.conveyor.bus;

/**
 * A node began (leads = true) or stopped leading a leader-only role (reaper, archive or webhooks) in a
 * partition; partition -1 is the reaper's cluster-wide judging of dead nodes.
 */
public record LeaseChanged(String role, int partition, String nodeId, boolean leads, long at) {
}
