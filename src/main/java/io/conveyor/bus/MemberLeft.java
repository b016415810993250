package io.conveyor.bus;

/** Hazelcast saw a cluster member leave: its Vert.x cluster node id. A hint to look, never a verdict. */
public record MemberLeft(String clusterNodeId) {
}
