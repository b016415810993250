package io.conveyor.testing;

import io.vertx.core.Vertx;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import io.vertx.redis.client.Command;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import redis.embedded.RedisServer;

/**
 * The Redis tests use. With CONVEYOR_TEST_REDIS_MODE=cluster, a real Redis Cluster of 3 masters and 3
 * replicas started from the local binaries (once per JVM, stopped when it ends); otherwise
 * CONVEYOR_TEST_REDIS_URL if set, else the local server on 6379 if it answers, else an embedded one on a free
 * port. Every test takes its own key prefix and drops it after. Nodes a test starts get the mode and
 * endpoints through env().
 */
public final class TestRedis {
  private static String url;
  private static List<String> endpoints;
  private static RedisClusterFixture cluster;
  private static Vertx vertx;
  private static Redis client;

  private TestRedis() {
  }

  /** The Redis Cluster the tests run on (CONVEYOR_TEST_REDIS_MODE=cluster), started if need be; else null. */
  public static synchronized RedisClusterFixture cluster() {
    endpoints();
    return cluster;
  }

  /** Whether the tests run on a Redis Cluster (CONVEYOR_TEST_REDIS_MODE=cluster). */
  public static boolean clusterMode() {
    String mode = System.getenv("CONVEYOR_TEST_REDIS_MODE");
    if (mode != null && !mode.isBlank() && !mode.equals("cluster") && !mode.equals("standalone")) {
      throw new IllegalStateException("CONVEYOR_TEST_REDIS_MODE: expected standalone or cluster, got " + mode);
    }
    return "cluster".equals(mode);
  }

  /**
   * With CONVEYOR_TEST_REDIS_PARTITIONS=P (cluster mode), the tests' keyspaces are split into P partitions
   * (their prefix is no hash tag); else one partition.
   */
  public static int partitions() {
    String p = System.getenv("CONVEYOR_TEST_REDIS_PARTITIONS");
    return p == null || p.isBlank() ? 1 : Integer.parseInt(p.trim());
  }

  /** The first endpoint: in standalone mode, the one server. */
  public static synchronized String url() {
    return endpoints().get(0);
  }

  public static synchronized List<String> endpoints() {
    if (endpoints == null) {
      if (clusterMode()) {
        cluster = RedisClusterFixture.start(3, 1);
        endpoints = cluster.endpoints();
        url = endpoints.get(0);
        return endpoints;
      }
      String given = System.getenv("CONVEYOR_TEST_REDIS_URL");
      if (given != null && !given.isBlank()) {
        url = given;
      } else if (answers(6379)) {
        url = "redis://127.0.0.1:6379";
      } else {
        url = startEmbedded();
      }
      endpoints = List.of(url);
    }
    return endpoints;
  }

  /** The settings a node needs to reach the tests' Redis (mode, endpoints). */
  public static java.util.Map<String, String> env() {
    java.util.Map<String, String> env = new java.util.HashMap<>();
    env.put("CONVEYOR_REDIS_URL", url());
    if (clusterMode()) {
      env.put("CONVEYOR_REDIS_MODE", "cluster");
      env.put("CONVEYOR_REDIS_ENDPOINTS", String.join(",", endpoints()));
      env.put("CONVEYOR_REDIS_PREFIX", partitions() == 1 ? "{test}:" : "test:"); // a node's own prefix overrides it
      env.put("CONVEYOR_REDIS_PARTITIONS", Integer.toString(partitions()));
    }
    return env;
  }

  /** Client options for the tests' Redis, as a node builds them. */
  public static io.vertx.redis.client.RedisOptions options(int maxPipelined) {
    return io.conveyor.redis.RedisLink.options(io.conveyor.config.ConfigLoader.load(null, env()).redis())
        .setMaxWaitingHandlers(maxPipelined).setMaxPoolWaiting(maxPipelined);
  }

  /**
   * A fresh key prefix, so tests never see each other's keys. On a Redis Cluster it is a hash tag, so all
   * of a test's keys share a slot (as a node's must).
   */
  public static String newPrefix() {
    byte[] b = new byte[6];
    ThreadLocalRandom.current().nextBytes(b);
    String name = "test-" + HexFormat.of().formatHex(b);
    return clusterMode() && partitions() == 1 ? "{" + name + "}:" : name + ":";
  }

  /** Runs a plain command and waits for its reply (for arranging and asserting, from a test thread). */
  public static Response cmd(Object... args) {
    Request r = Request.cmd(Command.create(args[0].toString()));
    for (int i = 1; i < args.length; i++) {
      r.arg(args[i].toString());
    }
    return client().send(r).await();
  }

  /** Every key under a prefix (on a Redis Cluster, on every master). */
  public static List<String> keys(String prefix) {
    List<String> out = new ArrayList<>();
    if (clusterMode()) {
      for (int port : cluster.masterPorts()) {
        out.addAll(scan(prefix, args -> on(port, args)));
      }
      return out;
    }
    return scan(prefix, args -> cmd(args));
  }

  private static final java.util.Map<Integer, Redis> servers = new java.util.HashMap<>();

  /** A command on every server (each master of a Redis Cluster, else the one server): their replies. */
  public static List<Response> onEveryServer(Object... args) {
    if (!clusterMode()) {
      return List.of(cmd(args));
    }
    List<Response> out = new ArrayList<>();
    for (int port : cluster.masterPorts()) {
      out.add(on(port, args));
    }
    return out;
  }

  /** A command on one server of the cluster (not routed by key). */
  private static synchronized Response on(int port, Object... args) {
    client();
    Redis server = servers.computeIfAbsent(port, p -> Redis.createClient(vertx,
        new RedisOptions().setConnectionString("redis://127.0.0.1:" + p).setMaxPoolWaiting(1000)));
    Request r = Request.cmd(Command.create(args[0].toString()));
    for (int i = 1; i < args.length; i++) {
      r.arg(args[i].toString());
    }
    return server.send(r).await();
  }

  private static List<String> scan(String prefix, java.util.function.Function<Object[], Response> send) {
    List<String> out = new ArrayList<>();
    String cursor = "0";
    do {
      Response page = send.apply(new Object[] {"SCAN", cursor, "MATCH", prefix + "*", "COUNT", 1000});
      cursor = page.get(0).toString();
      page.get(1).forEach(k -> out.add(k.toString()));
    } while (!cursor.equals("0"));
    return out;
  }

  /**
   * The keys a request could have left behind: every key under the prefix but the stats slots that hold
   * only what the reaper leader samples on its own every round (queue lengths), and the leader's record of
   * how far it folded the stats (statsFold, written on its own schedule: a test that compared before and
   * after failed when a fold fell between). A counted start or completion in a stats slot still shows. An eventsL
   * that holds only admin events is left out too: a refused admin request is audited by design (README, Audit log),
   * and that entry is its one trace (with its copy on auditX, which waits there for the archive).
   */
  public static List<String> traces(String prefix) {
    List<String> out = new ArrayList<>();
    for (String k : keys(prefix)) {
      if (k.endsWith(":statsFold")) {
        continue;
      }
      if (k.endsWith(":eventsL") && onlyAdminEvents(k) || k.endsWith(":auditX")) {
        continue;
      }
      if (k.matches(".*:stats[123]H:\\d+")) {
        boolean onlySamples = true;
        for (Response f : cmd("HKEYS", k)) {
          String name = f.toString();
          onlySamples &= name.startsWith("queue.") || name.equals("processing") || name.equals("sleeping");
        }
        if (onlySamples) {
          continue;
        }
      }
      out.add(k);
    }
    return out;
  }

  private static boolean onlyAdminEvents(String eventsL) {
    for (Response e : cmd("LRANGE", eventsL, 0, -1)) {
      if (!e.toString().contains("\"kind\":\"admin\"")) {
        return false;
      }
    }
    return true;
  }

  public static void drop(String prefix) {
    for (String k : keys(prefix)) {
      cmd("DEL", k);
    }
  }

  private static synchronized Redis client() {
    if (client == null) {
      vertx = Vertx.vertx();
      client = Redis.createClient(vertx, options(1000));
    }
    return client;
  }

  /**
   * A free port below the ephemeral range, never handed out twice in this JVM: a port the kernel picked (bind to 0)
   * lies in the range outgoing connections draw from, and starting nodes open dozens of those between the check and
   * the node's bind (CI once failed with "Address already in use" on a node's HTTP port).
   */
  public static int freePort() {
    return FreePorts.next(false);
  }

  public static boolean answers(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 300);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static String startEmbedded() {
    int port = freePort();
    try {
      RedisServer server = RedisServer.newRedisServer().port(port).bind("127.0.0.1").build();
      server.start();
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          server.stop();
        } catch (IOException e) {
          // the JVM is going away
        }
      }));
    } catch (IOException e) {
      throw new IllegalStateException("no Redis for tests: " + e.getMessage(), e);
    }
    return "redis://127.0.0.1:" + port;
  }

  private static final java.util.concurrent.atomic.AtomicLong IN_SCORE = new java.util.concurrent.atomic.AtomicLong();

  /** Puts a txId at the back of an in-queue (qInZ, a sorted set), after everything a test queued before. */
  public static void queueIn(String key, String txId) {
    cmd("ZADD", key, Long.toString(1_000_000 + IN_SCORE.incrementAndGet()), txId);
  }

  /** An in-queue's txIds, first in line first. */
  public static List<String> inQueue(String key) {
    List<String> out = new ArrayList<>();
    cmd("ZRANGE", key, "0", "-1").forEach(r -> out.add(r.toString()));
    return out;
  }
}
