package io.conveyor.bench.chaos;

import io.conveyor.testing.RedisClusterFixture;
import io.vertx.redis.client.impl.ZModem;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The redis-cluster scenarios' Redis: 3 masters with 2 replicas each, redis-server processes on free ports started by
 * the tests' RedisClusterFixture (the bench classes compile with the tests: pom.xml), with AOF on (appendfsync
 * everysec, Redis's default), cluster-node-timeout 2000 and cluster-replica-validity-factor 0 (the fixture's), cluster-require-full-coverage no. The
 * fixture throws when a server does not start or the cluster is not ok within 30 s, and stops its servers by their
 * processes on close; Teardown closes it even when the suite fails. Probes here are bounded redis-cli runs (1 s), so
 * a stopped master makes a probe fail instead of hang.
 */
final class ClusterRedis {
  static final int MASTERS = 3;
  static final int REPLICAS = 2;
  static final int SLOTS = 16384;
  final RedisClusterFixture fixture;
  private final Runnable undo;

  private ClusterRedis(RedisClusterFixture fixture) {
    this.fixture = fixture;
    this.undo = Teardown.add(fixture::close);
  }

  static ClusterRedis start() {
    return new ClusterRedis(RedisClusterFixture.start(MASTERS, REPLICAS,
        port -> List.of("--appendonly", "yes", "--appendfsync", "everysec", "--appenddirname", "aof-" + port,
            // as README's Redis Cluster section asks: with yes, every master refuses all commands (CLUSTERDOWN)
            // from the dead master's FAIL mark until its replica is promoted
            "--cluster-require-full-coverage", "no")));
  }

  /** The masters' endpoints (the nodes' redis.endpoints). */
  String endpoints() {
    return String.join(",", fixture.masterPorts().stream().map(p -> "redis://127.0.0.1:" + p).toList());
  }

  /** Partition p's hash slot: the slot of its tag, computed as the product's Partitions.tagName does. */
  static int slotOf(int p, int partitions) {
    int from = (int) ((long) p * SLOTS / partitions);
    int to = (int) ((long) (p + 1) * SLOTS / partitions);
    for (int k = 0; ; k++) {
      int slot = ZModem.generate(("p" + p + "-" + k).getBytes(StandardCharsets.UTF_8));
      if (slot >= from && slot < to) {
        return slot;
      }
    }
  }

  /** The partition a txId lives in (its first four hex digits modulo P, as the product's Partitions.of). */
  static int partitionOf(String txId, int partitions) {
    if (txId == null || txId.length() < 7 || !txId.startsWith("tx-")) {
      return -1;
    }
    return Integer.parseInt(txId, 3, 7, 16) % partitions;
  }

  /** Each partition's master port now, as the fixture sees it (before any fault). */
  List<Integer> mastersOfPartitions(int partitions) {
    List<Integer> out = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      out.add(fixture.masterOfSlot(slotOf(p, partitions)));
    }
    return out;
  }

  /** A command on one port, bounded to 1 s; its raw reply, or null. */
  static String cli(int port, String... args) {
    List<String> cmd = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port), "--raw"));
    cmd.addAll(List.of(args));
    return Procs.run(Duration.ofSeconds(1), cmd);
  }

  /**
   * Null when, as the node on askPort sees it, the cluster is ok (CLUSTER INFO) and every one of the slots is served
   * (CLUSTER NODES) by a master not flagged fail or fail? that answers PING itself; else what is missing.
   */
  static String notOk(int askPort, List<Integer> slots) {
    String info = cli(askPort, "CLUSTER", "INFO");
    if (info == null || !info.contains("cluster_state:ok")) {
      return info == null ? "node " + askPort + " silent" : "cluster_state not ok";
    }
    String nodes = cli(askPort, "CLUSTER", "NODES");
    if (nodes == null) {
      return "node " + askPort + " silent";
    }
    for (int slot : slots) {
      int port = servingPort(nodes, slot);
      if (port < 0) {
        return "no healthy master for slot " + slot;
      }
      String pong = cli(port, "PING");
      if (pong == null || !pong.strip().equals("PONG")) {
        return "master " + port + " of slot " + slot + " silent";
      }
    }
    return null;
  }

  /** The port of the master CLUSTER NODES says serves the slot and is not flagged failing; -1 if none. */
  static int servingPort(String nodes, int slot) {
    for (String line : nodes.lines().toList()) {
      String[] f = line.trim().split(" ");
      if (f.length < 9 || !f[2].contains("master") || f[2].contains("fail")) {
        continue;
      }
      for (int i = 8; i < f.length; i++) {
        if (f[i].startsWith("[")) {
          continue;
        }
        String[] range = f[i].split("-");
        int lo = Integer.parseInt(range[0]);
        int hi = range.length > 1 ? Integer.parseInt(range[1]) : lo;
        if (slot >= lo && slot <= hi) {
          String addr = f[1].split("@")[0];
          return Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
        }
      }
    }
    return -1;
  }

  void close() {
    undo.run();
  }
}
