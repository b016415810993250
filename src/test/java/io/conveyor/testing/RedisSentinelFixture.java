package io.conveyor.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A master, its replica and three Sentinels (quorum 2), all real redis-server processes on free ports (no
 * Docker). Kill the master and the Sentinels promote the replica on their own, as in production: after the
 * master is down for a second and they have elected a leader among them.
 */
public final class RedisSentinelFixture implements AutoCloseable {
  private final RedisProcesses servers;
  private final String masterName;
  private final List<Integer> dataPorts;
  private final List<Integer> sentinelPorts;
  /** Each server's TLS port by its plain one, when started with TLS (the plain ports serve the fixture). */
  private final Map<Integer, Integer> tlsPorts;

  private RedisSentinelFixture(RedisProcesses servers, String masterName, List<Integer> dataPorts,
      List<Integer> sentinelPorts) {
    this(servers, masterName, dataPorts, sentinelPorts, Map.of());
  }

  private RedisSentinelFixture(RedisProcesses servers, String masterName, List<Integer> dataPorts,
      List<Integer> sentinelPorts, Map<Integer, Integer> tlsPorts) {
    this.servers = servers;
    this.masterName = masterName;
    this.dataPorts = dataPorts;
    this.sentinelPorts = sentinelPorts;
    this.tlsPorts = tlsPorts;
  }

  /**
   * A master (no replica) and three Sentinels, each serving TLS on a port of its own besides its plain one, with a
   * certificate of certs' CA for 127.0.0.1; the Sentinels watch the master's TLS port (tls-replication), so the
   * master they name to a client is a TLS one.
   */
  public static RedisSentinelFixture startTls(String masterName, TestCerts certs) {
    TestCerts.Pair pair = certs.server("redis-sentinel", "redis-sentinel");
    List<String> tls = List.of("tls-cert-file " + pair.cert(), "tls-key-file " + pair.key(),
        "tls-ca-cert-file " + certs.ca(), "tls-auth-clients no", "tls-replication yes");
    RedisProcesses servers = new RedisProcesses("redis-tls-sentinel-");
    Map<Integer, Integer> tlsPorts = new java.util.concurrent.ConcurrentHashMap<>();
    try {
      int master = servers.start(false, port -> {
        tlsPorts.put(port, FreePorts.next(false));
        List<String> command = servers.serverArgs(port);
        command.addAll(List.of("--tls-port", Integer.toString(tlsPorts.get(port))));
        for (String line : tls) {
          String[] words = line.split(" ", 2);
          command.addAll(List.of("--" + words[0], words[1]));
        }
        return command;
      });
      List<Integer> sentinels = new java.util.ArrayList<>();
      for (int i = 0; i < 3; i++) {
        sentinels.add(servers.start(false, port -> {
          tlsPorts.put(port, FreePorts.next(false));
          List<String> lines = new java.util.ArrayList<>(tls);
          lines.add("tls-port " + tlsPorts.get(port));
          return sentinelCommand(servers, port, masterName, tlsPorts.get(master), lines);
        }));
      }
      RedisSentinelFixture fixture = new RedisSentinelFixture(servers, masterName, List.of(master),
          List.copyOf(sentinels), tlsPorts);
      RedisProcesses.await(RedisProcesses.READY, "every Sentinel to know the master and the other two",
          fixture::unknown);
      return fixture;
    } catch (RuntimeException | AssertionError e) {
      servers.close();
      throw e;
    }
  }

  /** The Sentinels' TLS endpoints (rediss://), when started with startTls. */
  public List<String> tlsSentinelEndpoints() {
    return sentinelPorts.stream().map(p -> "rediss://127.0.0.1:" + tlsPorts.get(p)).toList();
  }

  /**
   * Starts the master and the replica, waits for the replica to sync, then starts the Sentinels and waits
   * (bounded) until each knows the master, the replica and the two others.
   */
  public static RedisSentinelFixture start(String masterName) {
    return start(masterName, 1);
  }

  /** The same with more replicas (a master that fails over and must still have one to WAIT for). */
  public static RedisSentinelFixture start(String masterName, int replicas) {
    RedisProcesses servers = new RedisProcesses("redis-sentinel-");
    try {
      int master = servers.start(false, servers::serverArgs);
      List<Integer> data = new java.util.ArrayList<>(List.of(master));
      for (int i = 0; i < replicas; i++) {
        int replica = servers.start(false, port -> replicaCommand(servers, port, master));
        data.add(replica);
        // a Sentinel learns of replicas from the master's INFO, which it asks at once and then every 10 s only
        RedisProcesses.await(RedisProcesses.READY, "replica " + replica + " to sync with master " + master,
            () -> RedisCli.run(master, null, "INFO", "replication").contains("port=" + replica + ",state=online")
                ? null : "not online yet");
      }
      List<Integer> sentinels = List.of(sentinel(servers, masterName, master), sentinel(servers, masterName, master),
          sentinel(servers, masterName, master));
      RedisSentinelFixture fixture = new RedisSentinelFixture(servers, masterName, List.copyOf(data), sentinels);
      RedisProcesses.await(RedisProcesses.READY, "every Sentinel to know master, replica and the other two",
          fixture::unknown);
      return fixture;
    } catch (RuntimeException | AssertionError e) {
      servers.close();
      throw e;
    }
  }

  private static List<String> replicaCommand(RedisProcesses servers, int port, int master) {
    List<String> command = servers.serverArgs(port);
    command.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(master)));
    return command;
  }

  /** A Sentinel with its own config file, writable: Sentinels record what they learn in it. */
  private static int sentinel(RedisProcesses servers, String name, int master) {
    return servers.start(false, port -> sentinelCommand(servers, port, name, master, List.of()));
  }

  /** Writes the Sentinel's config file (with the extra lines given) and answers the command that runs it. */
  private static List<String> sentinelCommand(RedisProcesses servers, int port, String name, int master,
      List<String> extra) {
    Path conf = servers.dir.resolve("sentinel-" + port + ".conf");
    List<String> lines = new java.util.ArrayList<>(List.of("port " + port, "bind 127.0.0.1",
        "sentinel monitor " + name + " 127.0.0.1 " + master + " 2",
        "sentinel down-after-milliseconds " + name + " 1000", "sentinel failover-timeout " + name + " 5000",
        "sentinel parallel-syncs " + name + " 1"));
    lines.addAll(extra);
    try {
      Files.writeString(conf, String.join("\n", lines) + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return List.of(RedisProcesses.SERVER, conf.toString(), "--sentinel");
  }

  /** What some Sentinel does not know yet (its SENTINEL MASTER reply), or null when all know all. */
  private String unknown() {
    for (int port : sentinelPorts) {
      Map<String, String> m = fields(RedisCli.tryRun(port, "SENTINEL", "MASTER", masterName));
      if (!"master".equals(m.get("flags")) || !Integer.toString(dataPorts.size() - 1).equals(m.get("num-slaves"))
          || !"2".equals(m.get("num-other-sentinels"))) {
        return "Sentinel " + port + " says " + m;
      }
    }
    return null;
  }

  /** A reply of alternating names and values, one a line. */
  private static Map<String, String> fields(String reply) {
    Map<String, String> m = new HashMap<>();
    List<String> lines = reply == null ? List.of() : reply.lines().toList();
    for (int i = 0; i + 1 < lines.size(); i += 2) {
      m.put(lines.get(i), lines.get(i + 1));
    }
    return m;
  }

  public List<String> sentinelEndpoints() {
    return sentinelPorts.stream().map(p -> "redis://127.0.0.1:" + p).toList();
  }

  /** The Sentinels' ports, in the order of {@link #sentinelEndpoints()}. */
  public List<Integer> sentinelPorts() {
    return sentinelPorts;
  }

  /** The master as the first live Sentinel names it (SENTINEL GET-MASTER-ADDR-BY-NAME). */
  public int masterPort() {
    int sentinel = sentinelPorts.stream().filter(servers::alive).findFirst()
        .orElseThrow(() -> new IllegalStateException("every Sentinel is dead"));
    return masterNamedBy(sentinel);
  }

  private int masterNamedBy(int sentinel) {
    List<String> addr = cmd(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName).lines().toList();
    return Integer.parseInt(addr.get(addr.size() - 1));
  }

  /** The data server that is not the master now: after a failover, the old master (dead unless restarted). */
  public int replicaPort() {
    int master = masterPort();
    return dataPorts.stream().filter(p -> p != master).findFirst().orElseThrow();
  }

  public long pid(int port) {
    return servers.pid(port);
  }

  /** SIGKILL: a crash, nothing said to anyone. */
  public void kill(int port) {
    servers.kill(port);
  }

  /** Waits until every live Sentinel names another master than the old one, and that one says it is master. */
  public void awaitFailover(int oldMasterPort, Duration max) {
    RedisProcesses.await(max, "the Sentinels to fail over from " + oldMasterPort, () -> {
      for (int sentinel : sentinelPorts.stream().filter(servers::alive).toList()) {
        String addr = RedisCli.tryRun(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName);
        if (addr == null || addr.endsWith("\n" + oldMasterPort)) {
          return "Sentinel " + sentinel + " names " + addr;
        }
      }
      int master = masterPort();
      String role = RedisCli.tryRun(master, "ROLE");
      return role != null && role.startsWith("master") ? null : master + " says its role is " + role;
    });
  }

  /** One command on one server (a Sentinel or a data server); the reply as redis-cli prints it, errors too. */
  public String cmd(int port, String... args) {
    return RedisCli.run(port, null, args);
  }

  /** Command lines sent in turn over one connection (as WAIT needs), their replies one a line. */
  public String session(int port, String... lines) {
    return RedisCli.run(port, String.join("\n", lines));
  }

  /** Stops every server (SIGTERM, SIGKILL after 3 s) and deletes the temp dir. */
  @Override
  public void close() {
    servers.close();
  }
}
