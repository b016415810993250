package io.conveyor.bus;

/** A node began (leads = true) or stopped leading a leader-only role: reaper, archive or webhooks. */
public record LeaseChanged(String role, String nodeId, boolean leads, long at) {
}
