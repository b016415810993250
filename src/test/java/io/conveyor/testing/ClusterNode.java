package io.conveyor.testing;

import java.util.BitSet;
import java.util.List;

/** One line of CLUSTER NODES: a node of a Redis Cluster as another node sees it. */
record ClusterNode(int port, List<String> flags, BitSet slots) {
  static final int SLOTS = 16384;

  /** A master the cluster has not failed: it serves its slots. */
  boolean serving() {
    return flags.contains("master") && !flags.contains("fail");
  }

  boolean replica() {
    return flags.contains("slave");
  }

  /** Lines of "id ip:port@bus flags master ping pong epoch link slot...", slots as "0-5460" or "5461". */
  static List<ClusterNode> parse(String text) {
    return text.lines().map(line -> {
      String[] f = line.split(" ");
      int port = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
      BitSet slots = new BitSet(SLOTS);
      for (int i = 8; i < f.length; i++) {
        if (!f[i].startsWith("[")) { // "[slot->-id]": a slot on the move, still served where it was
          String[] range = f[i].split("-");
          slots.set(Integer.parseInt(range[0]), Integer.parseInt(range[range.length - 1]) + 1);
        }
      }
      return new ClusterNode(port, List.of(f[2].split(",")), slots);
    }).toList();
  }
}
