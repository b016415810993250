package io.conveyor.lease;

import io.conveyor.time.Ticker;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * This node's Hazelcast view held against the nodes registered in Redis. Two uses:
 * <ul>
 *   <li><b>The gate.</b> A node that comes back from a pause (its beat was LATE or FENCED, or Hazelcast split it
 *   off) is held: it takes no work and hands off no start until its view is whole again, i.e. every live node's
 *   clusterNodeId is among its members and every live node reports the same members it sees (the "view"
 *   fingerprint in each heartbeat), so requests it sends can be answered both ways.</li>
 *   <li><b>Changes.</b> When the view last changed (a member left, joined, or merged back; a registered node
 *   went silent for two beats, or left the registry): an event-bus request that got no answer while it
 *   changed went, most likely, where no answer could come back from, and is tried again.</li>
 * </ul>
 * Shared by Hazelcast's listener threads, the heartbeat, the dequeue verticle and the steps: thread-safe values
 * outside any verticle, like Registration. Without a cluster it is always whole and never changes.
 */
public final class ClusterView {
  /**
   * The longest a node is held: a view that is not whole by then will not be soon (a node registered in Redis
   * outside this cluster, a member others cannot reach), and a node held for ever would be a worse outage.
   */
  public static final Duration MAX_HOLD = Duration.ofSeconds(60);
  private final Ticker ticker;
  private final long silentNanos;
  private final AtomicLong lastChange;
  private volatile Supplier<Collection<String>> members;
  private volatile boolean merging;
  private volatile boolean held;
  private volatile long heldSince;
  /** The live nodes' info as the last beat read it: clusterNodeId → the view fingerprint it reported. */
  private volatile Map<String, String> registered = Map.of();
  /** nodeId → [its last beat text, when (the ticker) it last changed], to tell a silent node. */
  private final Map<String, Object[]> beats = new ConcurrentHashMap<>();
  private volatile boolean silentNodes;

  /** silentAfter: how long a registered node's heartbeat may stand still before it counts as suspect. */
  public ClusterView(Duration silentAfter, Ticker ticker) {
    this.ticker = ticker;
    this.silentNanos = silentAfter.toNanos();
    this.lastChange = new AtomicLong(ticker.nanos() - Long.MAX_VALUE / 2);
  }

  /** This node's members (Vert.x node ids), once it has joined its cluster. */
  public void members(Supplier<Collection<String>> source) {
    this.members = source;
  }

  /** Hazelcast: a member joined or left. */
  public void changed() {
    lastChange.set(ticker.nanos());
  }

  /** Hazelcast: this member is merging back (true), or merged or gave up (false). */
  public void merging(boolean now) {
    merging = now;
    changed();
    if (now) {
      hold();
    }
  }

  /**
   * Hazelcast: a member left. When this node now sees fewer than half of the nodes Redis lists, it is the one
   * split off (a pause, a partition): held until whole.
   */
  public void memberLeft() {
    changed();
    Map<String, String> reg = registered;
    Collection<String> mine = current();
    if (mine != null && !reg.isEmpty()
        && reg.keySet().stream().filter(mine::contains).count() * 2 < reg.size()) {
      hold();
    }
  }

  /** A pause concerned this node (a late beat, a fence, a split): no work until the view is whole. */
  public void hold() {
    if (!held) {
      heldSince = ticker.nanos();
      held = true;
    }
  }

  /** True while this node is held (see hold); the heartbeat releases it once the view is whole. */
  public boolean held() {
    return held;
  }

  /**
   * The live nodes as this node's accepted beat read them (nodeId → heartbeat info). Releases a held node whose
   * view is whole, or that was held for MAX_HOLD; answers how long it was held (ms), or -1 when it is not released
   * now.
   */
  public long registered(String self, Map<String, JsonObject> live) {
    Map<String, String> reg = new HashMap<>();
    long now = ticker.nanos();
    boolean silent = false;
    live.forEach((nodeId, info) -> {
      String id = info.getString("clusterNodeId");
      if (id != null) {
        reg.put(id, info.getString("view", ""));
      }
      String beat = String.valueOf(info.getValue("seq", info.getValue("beat")));
      Object[] last = beats.get(nodeId);
      if (!nodeId.equals(self) && (last == null || !beat.equals(last[0]))) {
        beats.put(nodeId, new Object[] {beat, now});
      }
    });
    for (Map.Entry<String, Object[]> e : beats.entrySet()) {
      silent |= live.containsKey(e.getKey()) && now - (Long) e.getValue()[1] > silentNanos;
    }
    if (beats.keySet().retainAll(live.keySet()) || !reg.keySet().equals(registered.keySet())) {
      changed(); // a node joined or left the registry
    }
    silentNodes = silent;
    registered = Map.copyOf(reg);
    if (held && (whole() || now - heldSince > MAX_HOLD.toNanos())) {
      held = false;
      return (now - heldSince) / 1_000_000;
    }
    return -1;
  }

  /**
   * Whether this node's view and Redis's registry agree: no merge under way, every registered node among its
   * members, and every registered node seeing the members it sees.
   */
  public boolean whole() {
    Collection<String> mine = current();
    if (mine == null) {
      return true;
    }
    String print = fingerprint(mine);
    return !merging && registered.entrySet().stream()
        .allMatch(e -> mine.contains(e.getKey()) && (e.getValue().isEmpty() || e.getValue().equals(print)));
  }

  /** A short fingerprint of this node's members, for its heartbeat info ("view"); "" without a cluster. */
  public String fingerprint() {
    Collection<String> mine = current();
    return mine == null ? "" : fingerprint(mine);
  }

  private static String fingerprint(Collection<String> members) {
    Set<String> sorted = new TreeSet<>(members);
    return Integer.toHexString(String.join(",", sorted).hashCode()) + "/" + sorted.size();
  }

  private Collection<String> current() {
    Supplier<Collection<String>> m = members;
    return m == null ? null : m.get();
  }

  /** A mark of now, for {@link #changedSince(long)}. */
  public long now() {
    return ticker.nanos();
  }

  /** Whether the view changed since the mark, or is changing now (a merge, a registered node gone silent). */
  public boolean changedSince(long mark) {
    return members != null && (lastChange.get() - mark >= 0 || merging || silentNodes || held);
  }
}
