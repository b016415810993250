package io.conveyor.redis;

import io.vertx.redis.client.Response;
import io.vertx.redis.client.impl.RequestImpl;
import io.vertx.redis.client.impl.ZModem;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which master serves each of a Redis Cluster's 16,384 slots, as one CLUSTER SLOTS reply said: endpoints are
 * "host:port". Immutable; the router swaps in a new one when it reads the map again (or a MOVED names a new owner).
 */
final class SlotMap {
  static final int SLOTS = 16_384;
  static final SlotMap EMPTY = new SlotMap(new String[SLOTS]);
  /** A MOVED or ASK reply, alone or as a batch's "ERR [i] MOVED 3999 127.0.0.1:7002" line. */
  private static final Pattern REDIRECT = Pattern.compile("(?:^|] |\\n)(MOVED|ASK) (\\d+) (\\S*:\\d+)");

  private final String[] owners;
  /**
   * Every master, in slot order: worked out once, as the map never changes. Asked on every command (mapped() asks
   * known()), a walk of the 16,384 slots per call had been 30 % of a node's CPU at 400 starts a second (JFR).
   */
  private final List<String> masters;

  private SlotMap(String[] owners) {
    this(owners, mastersOf(owners));
  }

  private SlotMap(String[] owners, List<String> masters) {
    this.owners = owners;
    this.masters = masters;
  }

  private static List<String> mastersOf(String[] owners) {
    LinkedHashSet<String> all = new LinkedHashSet<>();
    for (String o : owners) {
      if (o != null) {
        all.add(o);
      }
    }
    return List.copyOf(all);
  }

  /** The map from a CLUSTER SLOTS reply; a master named with no host ("" or "?") is on the host that answered. */
  static SlotMap parse(Response reply, String askedHost) {
    String[] owners = new String[SLOTS];
    // the masters in slot order from the ranges' starts, not from a walk of every slot: a router re-reads the map
    // twice a second while a master fails, and the walk was 4 % of a node's samples during a failover
    java.util.TreeMap<Integer, String> byStart = new java.util.TreeMap<>();
    for (Response range : reply) {
      Response master = range.get(2);
      String host = master.get(0) == null ? "" : master.get(0).toString();
      String endpoint = (host.isEmpty() || host.equals("?") ? askedHost : host) + ":" + master.get(1).toInteger();
      int from = range.get(0).toInteger();
      Arrays.fill(owners, from, range.get(1).toInteger() + 1, endpoint);
      byStart.put(from, endpoint);
    }
    return new SlotMap(owners, List.copyOf(new LinkedHashSet<>(byStart.values())));
  }

  /** The same map with one slot's owner changed (a MOVED reply said so). */
  SlotMap with(int slot, String endpoint) {
    String[] copy = owners.clone();
    copy[slot] = endpoint;
    return new SlotMap(copy);
  }

  /** The master of the slot; null when no master serves it (or the map is not read yet). */
  String owner(int slot) {
    return slot < 0 ? null : owners[slot];
  }

  /** Whether any slot has a master: a map read from a cluster that is up. */
  boolean known() {
    return !masters.isEmpty();
  }

  /** Every master, in slot order (an unmodifiable list). */
  List<String> masters() {
    return masters;
  }

  /** The slot of a request's keys (of its first key when they span slots: Redis will refuse it); -1 keyless. */
  static int slotOf(io.vertx.redis.client.Request request) {
    List<byte[]> keys = ((RequestImpl) request).keys();
    return keys.isEmpty() ? -1 : ZModem.generate(keys.get(0));
  }

  /** The slot of the first request that has keys; -1 when none has (a keyless batch). */
  static int slotOf(List<io.vertx.redis.client.Request> batch) {
    for (io.vertx.redis.client.Request r : batch) {
      int slot = slotOf(r);
      if (slot >= 0) {
        return slot;
      }
    }
    return -1;
  }

  /** The slot of a key, as Redis computes it (hash tags count). */
  static int slotOf(String key) {
    return ZModem.generate(key);
  }

  /** A redirection a server answered: ask (one command, after ASKING) or moved (for good). */
  record Redirect(boolean ask, int slot, String endpoint) {
    /** The redirection in a failure, or null; ":port" (an unknown host) is on the host that answered. */
    static Redirect of(Throwable e, String askedHost) {
      Matcher m = REDIRECT.matcher(String.valueOf(e.getMessage()));
      if (!m.find()) {
        return null;
      }
      String endpoint = m.group(3).startsWith(":") ? askedHost + m.group(3) : m.group(3);
      return new Redirect(m.group(1).equals("ASK"), Integer.parseInt(m.group(2)), endpoint);
    }
  }

  /** The host of a "host:port" endpoint. */
  static String host(String endpoint) {
    return endpoint.substring(0, endpoint.lastIndexOf(':'));
  }
}
