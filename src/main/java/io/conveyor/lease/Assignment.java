package io.conveyor.lease;

import io.conveyor.time.Ticker;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which partitions of a leader role this node should lead: the live nodes that have the role, in nodeId
 * order, take the partitions in turn (partition p goes to the node at p mod n), so no node holds more than
 * its share (rounded up). The view is what the heartbeat last read of the live nodes; a node Hazelcast says
 * has left is left out at once for one heartbeat TTL (the lease it held runs out meanwhile, and its heirs
 * take its partitions then). With one partition every node wants it, and the lease alone decides.
 * <p>
 * A node leads a partition only through its lease; this only says whom to ask for it and who should let go
 * (a node that leads a partition it no longer wants hands it on, so its heir can take it at once). Two nodes
 * whose views differ for a moment may both want one partition: the lease picks one. Shared by the node's
 * verticles, so it holds immutable snapshots.
 */
public final class Assignment {
  private final String nodeId;
  private final int partitions;
  private final Ticker ticker;
  private final long departedForNanos;
  /** nodeId → roles of the live nodes, as the last heartbeat read them. */
  private volatile Map<String, List<String>> live = Map.of();
  /** The groups the live nodes serve. */
  private volatile java.util.Set<String> groups = java.util.Set.of();
  /** nodeId → clusterNodeId, to match Hazelcast's member-left. */
  private volatile Map<String, String> clusterIds = Map.of();
  /** nodeId → until when (the ticker) it counts as gone whatever the view says. */
  private final Map<String, Long> departed = new ConcurrentHashMap<>();
  /** The roles the live nodes stand down from for now (their heartbeat's "away"): nodeId → roles. */
  private volatile Map<String, List<String>> awayInView = Map.of();
  /** The roles this node stands down from, and until when (the ticker). */
  private final Map<String, Long> awayHere = new ConcurrentHashMap<>();

  public Assignment(String nodeId, int partitions, java.time.Duration heartbeatTtl, Ticker ticker) {
    this.ticker = ticker;
    this.nodeId = nodeId;
    this.partitions = partitions;
    this.departedForNanos = heartbeatTtl.toNanos();
  }

  public int partitions() {
    return partitions;
  }

  /** The live nodes' heartbeat info (nodeId → info with roles and clusterNodeId), as the heartbeat read it. */
  public void view(Map<String, JsonObject> nodes) {
    Map<String, List<String>> roles = new java.util.TreeMap<>();
    Map<String, String> ids = new java.util.HashMap<>();
    java.util.Set<String> served = new java.util.TreeSet<>();
    Map<String, List<String>> away = new java.util.HashMap<>();
    nodes.forEach((id, info) -> {
      if (info.getJsonArray("away") != null && !info.getJsonArray("away").isEmpty()) {
        List<String> a = new ArrayList<>();
        info.getJsonArray("away").forEach(x -> a.add(String.valueOf(x)));
        away.put(id, List.copyOf(a));
      }
      if (info.getString("group") != null) {
        served.add(info.getString("group"));
      }
      List<String> r = new ArrayList<>();
      if (info.getJsonArray("roles") != null) {
        info.getJsonArray("roles").forEach(x -> r.add(String.valueOf(x)));
      }
      roles.put(id, List.copyOf(r));
      if (info.getString("clusterNodeId") != null) {
        ids.put(id, info.getString("clusterNodeId"));
      }
    });
    live = java.util.Collections.unmodifiableMap(roles);
    awayInView = Map.copyOf(away);
    groups = java.util.Collections.unmodifiableSet(served);
    clusterIds = Map.copyOf(ids);
  }

  /** The groups the live nodes serve, as the last heartbeat saw them. */
  public java.util.Set<String> groups() {
    return groups;
  }

  /**
   * This node stands down from a role for a while (its archive writes keep failing): it wants none of the
   * role's partitions meanwhile, and its heartbeat says so (awayRoles), so the others share them out
   * without it instead of leaving its partitions unled.
   */
  public void away(String role, java.time.Duration length) {
    awayHere.put(role, ticker.nanos() + length.toNanos());
  }

  /** The roles this node stands down from now (for its heartbeat info). */
  public List<String> awayRoles() {
    long now = ticker.nanos();
    awayHere.values().removeIf(until -> until - now < 0);
    return List.copyOf(new java.util.TreeSet<>(awayHere.keySet()));
  }

  /** Hazelcast says this member left: its node is left out of the view for one heartbeat TTL. */
  public void memberLeft(String clusterNodeId) {
    clusterIds.forEach((node, cluster) -> {
      if (cluster.equals(clusterNodeId) && !node.equals(nodeId)) {
        departed.put(node, ticker.nanos() + departedForNanos);
      }
    });
  }

  /**
   * Whether this node should lead partition p of the role (named as in node.roles: reaper, archive,
   * webhooks). Asked by the role's verticles, so this node has the role.
   */
  public boolean wants(String role, int p) {
    if (partitions == 1) {
      return true;
    }
    long now = ticker.nanos();
    departed.values().removeIf(until -> until - now < 0);
    if (awayRoles().contains(role)) {
      return false;
    }
    List<String> candidates = new ArrayList<>();
    Map<String, List<String>> away = awayInView;
    live.forEach((id, roles) -> {
      if (roles.contains(role) && !departed.containsKey(id) && !away.getOrDefault(id, List.of()).contains(role)) {
        candidates.add(id);
      }
    });
    if (!candidates.contains(nodeId)) {
      candidates.add(nodeId); // not in the view yet (it has just registered): it counts itself
      java.util.Collections.sort(candidates);
    }
    return candidates.indexOf(nodeId) == p % candidates.size();
  }
}
