package io.conveyor.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A Redis Cluster of real redis-server processes on free ports (/usr/bin/redis-server, no Docker): masters and
 * their replicas, every slot covered. Kill a master and its replica takes over on its own, as in production:
 * after the node timeout (2 s) and an election (1-2 s more).
 */
public final class RedisClusterFixture implements AutoCloseable {
  /** How long a node may stay silent before the others count it failing. */
  private static final int NODE_TIMEOUT_MS = 2000;
  private final RedisProcesses servers;
  private final int replicas;
  /** Each node's TLS port by its plain one, in a cluster started with TLS (the plain ports serve the fixture). */
  private final Map<Integer, Integer> tlsPorts;

  private RedisClusterFixture(RedisProcesses servers, int replicas, Map<Integer, Integer> tlsPorts) {
    this.servers = servers;
    this.replicas = replicas;
    this.tlsPorts = tlsPorts;
  }

  /** Starts the nodes, makes them one cluster, and waits (bounded) until every node serves and every replica syncs. */
  public static RedisClusterFixture start(int masters, int replicasPerMaster) {
    return start(masters, replicasPerMaster, port -> List.of());
  }

  /**
   * The same with more redis-server options for each node's port, after the fixture's own (the last of an option
   * wins). The nodes share one directory, so AOF needs a directory name per port: bench/chaos's redis-cluster
   * scenarios pass "--appendonly", "yes", "--appenddirname", "aof-" + port.
   */
  public static RedisClusterFixture start(int masters, int replicasPerMaster,
      java.util.function.IntFunction<List<String>> extraArgs) {
    RedisProcesses servers = new RedisProcesses("redis-cluster-");
    return start(servers, masters, replicasPerMaster, port -> {
      List<String> command = nodeCommand(servers, port);
      command.addAll(extraArgs.apply(port));
      return command;
    }, Map.of());
  }

  /**
   * The same with TLS: each node serves TLS (a certificate of certs' CA for 127.0.0.1) on a port of its own besides
   * its plain one, and the cluster bus is TLS too (tls-cluster), so CLUSTER SLOTS names TLS ports to TLS clients.
   */
  public static RedisClusterFixture startTls(int masters, TestCerts certs) {
    TestCerts.Pair pair = certs.server("redis-cluster", "redis-cluster");
    RedisProcesses servers = new RedisProcesses("redis-tls-cluster-");
    Map<Integer, Integer> tls = new ConcurrentHashMap<>();
    return start(servers, masters, 0, port -> {
      tls.put(port, FreePorts.next(false));
      List<String> command = nodeCommand(servers, port);
      command.addAll(List.of("--tls-port", Integer.toString(tls.get(port)), "--tls-cluster", "yes", "--cluster-port",
          Integer.toString(port + 10_000), "--tls-cert-file", pair.cert().toString(), "--tls-key-file",
          pair.key().toString(), "--tls-ca-cert-file", certs.ca().toString(), "--tls-auth-clients", "no"));
      return command;
    }, tls);
  }

  private static RedisClusterFixture start(RedisProcesses servers, int masters, int replicasPerMaster,
      java.util.function.IntFunction<List<String>> command, Map<Integer, Integer> tls) {
    try {
      for (int i = 0; i < masters * (1 + replicasPerMaster); i++) {
        servers.start(true, command);
      }
      RedisClusterFixture cluster = new RedisClusterFixture(servers, masters * replicasPerMaster, tls);
      List<String> create = new ArrayList<>(List.of(RedisCli.PATH, "--cluster", "create"));
      servers.ports().forEach(p -> create.add("127.0.0.1:" + p));
      create.addAll(List.of("--cluster-replicas", Integer.toString(replicasPerMaster), "--cluster-yes"));
      RedisCli.run(create, null, RedisProcesses.READY);
      RedisProcesses.await(RedisProcesses.READY, "the new cluster to be ok on every node, every replica in sync",
          () -> cluster.missing(-1));
      return cluster;
    } catch (RuntimeException | AssertionError e) {
      servers.close();
      throw e;
    }
  }

  private static List<String> nodeCommand(RedisProcesses servers, int port) {
    List<String> command = servers.serverArgs(port);
    // validity factor 0: a replica takes over however long it had been cut off from its master
    command.addAll(List.of("--cluster-enabled", "yes", "--cluster-config-file",
        servers.dir.resolve("nodes-" + port + ".conf").toString(), "--cluster-node-timeout",
        Integer.toString(NODE_TIMEOUT_MS), "--cluster-replica-validity-factor", "0"));
    return command;
  }

  /** Every node, the killed ones too (a client skips a seed that does not answer). */
  public List<String> endpoints() {
    return ports().stream().map(p -> "redis://127.0.0.1:" + p).toList();
  }

  /** Every node's TLS endpoint (rediss://), in a cluster started with startTls. */
  public List<String> tlsEndpoints() {
    return ports().stream().map(p -> "rediss://127.0.0.1:" + tlsPorts.get(p)).toList();
  }

  /** Every node's port, in the order of {@link #endpoints()}. */
  public List<Integer> ports() {
    return servers.ports();
  }

  /** The live nodes that say (ROLE) they are masters now. */
  public List<Integer> masterPorts() {
    return servers.livePorts().stream().filter(p -> role(p).get(0).equals("master")).toList();
  }

  /** The live nodes that say (ROLE) they are replicas now. */
  public List<Integer> replicaPorts() {
    return servers.livePorts().stream().filter(p -> role(p).get(0).equals("slave")).toList();
  }

  /** The live nodes that say (ROLE) they replicate this master: the candidates to take over from it. */
  public List<Integer> replicasOf(int masterPort) {
    return replicaPorts().stream().filter(p -> role(p).get(2).equals(Integer.toString(masterPort))).toList();
  }

  private List<String> role(int port) {
    return cmd(port, "ROLE").lines().toList();
  }

  /** The master serving the key's slot now (hash tags count: "{p1}:a" and "{p1}:b" share one). */
  public int masterOfKey(String key) {
    return masterOfSlot(Integer.parseInt(cmd(anyLive(), "CLUSTER", "KEYSLOT", key)));
  }

  /** A partition and the master that serves it. */
  public record PartitionMaster(int partition, int port) {
  }

  /**
   * The first partition (of a node's keys) whose master does not also hold the global keys (heartbeats, nodes,
   * leases), so holding that master back leaves the node registered; null when every partition shares it.
   */
  public PartitionMaster partitionOffGlobal(io.conveyor.redis.Keys keys) {
    int global = masterOfKey(keys.nodesZ());
    for (int p = 0; p < keys.partitions(); p++) {
      int master = masterOfKey(keys.stateH(keys.newTxId(p)));
      if (master != global) {
        return new PartitionMaster(p, master);
      }
    }
    return null;
  }

  /** The master serving the slot now, as a live node sees the cluster. */
  public int masterOfSlot(int slot) {
    int asked = anyLive();
    return ClusterNode.parse(cmd(asked, "CLUSTER", "NODES")).stream()
        .filter(n -> n.serving() && n.slots().get(slot)).findFirst().map(ClusterNode::port)
        .orElseThrow(() -> new IllegalStateException("node " + asked + " knows no master for slot " + slot
            + " (a failover under way? awaitFailover first)"));
  }

  public long pid(int port) {
    return servers.pid(port);
  }

  /** SIGKILL to the node: a crash, nothing said to the others. */
  public void kill(int port) {
    servers.kill(port);
  }

  /** SIGSTOP (stop true) or SIGCONT to the node: a pause, its connections left open and silent. */
  public void pause(int port, boolean stop) {
    long pid = pid(port);
    try {
      Process p = new ProcessBuilder("kill", stop ? "-STOP" : "-CONT", Long.toString(pid)).inheritIO().start();
      if (p.waitFor() != 0) {
        throw new IllegalStateException("kill " + (stop ? "-STOP " : "-CONT ") + pid + " failed");
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Waits until every live node is ok again and sees every slot served by a master other than the dead one. */
  public void awaitFailover(int deadPort, Duration max) {
    RedisProcesses.await(max, "the cluster to fail over from node " + deadPort, () -> missing(deadPort));
  }

  /** One command on one node, redirects not followed; the reply as redis-cli prints it, error replies too. */
  public String cmd(int port, String... args) {
    return RedisCli.run(port, null, args);
  }

  /** One command sent to a node and on to the node a MOVED or ASK names. */
  public String clusterCmd(int port, String... args) {
    return unredirected(RedisCli.run(port, null, Stream.concat(Stream.of("-c"), Arrays.stream(args))
        .toArray(String[]::new)));
  }

  /**
   * Command lines ("SET {p1}:a x") sent in turn over one connection that follows redirects, their replies one a
   * line. One connection matters to WAIT: it counts the replicas that have this connection's writes.
   */
  public String session(int port, String... lines) {
    return unredirected(RedisCli.run(port, String.join("\n", lines), "-c"));
  }

  /** The output without redis-cli's "-> Redirected to slot ..." notes. */
  private static String unredirected(String output) {
    return output.lines().filter(l -> !l.startsWith("-> Redirected")).collect(Collectors.joining("\n"));
  }

  private int anyLive() {
    return servers.livePorts().stream().findFirst()
        .orElseThrow(() -> new IllegalStateException("every node of the cluster is dead"));
  }

  /**
   * What still keeps the cluster from health, as the first live node that sees a gap says; null when nothing.
   * Healthy: ok, every node known, every slot served by a master that is not failing nor the dead port; and
   * before any death (deadPort -1), every replica attached and in sync.
   */
  private String missing(int deadPort) {
    for (int port : servers.livePorts()) {
      String info = RedisCli.tryRun(port, "CLUSTER", "INFO");
      String nodes = RedisCli.tryRun(port, "CLUSTER", "NODES");
      if (info == null || nodes == null) {
        return "node " + port + " does not answer";
      }
      if (!info.contains("cluster_state:ok")) {
        return "node " + port + " says " + info.lines().findFirst().orElse("nothing");
      }
      List<ClusterNode> view = ClusterNode.parse(nodes);
      int served = view.stream().filter(n -> n.serving() && n.port() != deadPort)
          .mapToInt(n -> n.slots().cardinality()).sum();
      if (view.size() != servers.ports().size() || served != ClusterNode.SLOTS) {
        return "node " + port + " knows " + view.size() + " nodes and sees " + served + " slots served: " + nodes;
      }
      if (deadPort < 0 && (view.stream().filter(ClusterNode::replica).count() != replicas || !inSync(port, view))) {
        return "node " + port + " sees replicas missing or out of sync: " + nodes;
      }
    }
    return null;
  }

  private boolean inSync(int port, List<ClusterNode> view) {
    boolean replica = view.stream().anyMatch(n -> n.port() == port && n.replica());
    String role = RedisCli.tryRun(port, "ROLE");
    return !replica || role != null && role.lines().skip(3).findFirst().orElse("").equals("connected");
  }

  /** Stops every node (SIGTERM, SIGKILL after 3 s) and deletes the temp dir. */
  @Override
  public void close() {
    servers.close();
  }
}
