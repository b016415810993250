package io.conveyor.bench.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One run's cluster: three node processes from the fat jar on the suite's private Redis and PostgreSQL,
 * with a key prefix, archive table, cluster name and Hazelcast ports of the run's own, and the driver as a
 * fourth member. Also the probes the scenarios read: leases, in-flight sets, readiness, Redis clients.
 */
final class Rig {
  static final int NODES = 3;
  static final String PIPELINE = "chaos";
  /** A second tenant (runaway-cycle's), with a key of its own: client and admin, so it may upload pipelines. */
  static final String OTHER_OWNER = "runaway";
  final String otherKey;
  final String prefix;
  final String table;
  final RedisServer redis;
  final PgServer pg;
  final List<NodeProc> nodes = new ArrayList<>();
  final Driver driver;
  final Path dir;

  private Rig(String prefix, String table, RedisServer redis, PgServer pg, Driver driver, Path dir, String otherKey) {
    this.prefix = prefix;
    this.otherKey = otherKey;
    this.table = table;
    this.redis = redis;
    this.pg = pg;
    this.driver = driver;
    this.dir = dir;
  }

  /**
   * Starts the driver and the three nodes, and waits until each says it started. With tls, a CA of the run's and a
   * pair per node (ChaosTls): every node on HTTPS and bus mutual TLS, the driver calling and joining accordingly.
   */
  static Rig start(RedisServer redis, PgServer pg, Path dir, int stepMillis, Map<String, String> extraEnv,
                   boolean notIdempotent, boolean tls) throws Exception {
    return start(redis, pg, dir, stepMillis, extraEnv, notIdempotent, tls, 3, false, NODES);
  }

  /**
   * The same with a pipeline of the given number of steps (extraEnv may point the nodes at another Redis); oneAtATime
   * waits for each node to start before the next (on two busy cores three JVMs starting at once can take past their
   * 10 s Redis timeout); count is how many node processes (NODES for every scenario that faults a node).
   */
  static Rig start(RedisServer redis, PgServer pg, Path dir, int stepMillis, Map<String, String> extraEnv,
                   boolean notIdempotent, boolean tls, int steps, boolean oneAtATime, int count) throws Exception {
    String hex = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    String cluster = "chaos-" + hex;
    String apiKey = "chaos-key-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    String otherKey = OTHER_OWNER + "-key-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    Files.createDirectories(dir.resolve("pipelines"));
    Files.writeString(dir.resolve("pipelines").resolve(PIPELINE + ".json"), pipeline(notIdempotent, steps));
    Path clusterXml = clusterXml(dir, Ports.freeRange(count + 1), count + 1);
    Path logback = logback(dir);
    ChaosTls certs = tls ? ChaosTls.in(dir) : null;
    Driver driver = Driver.start(clusterXml, cluster, apiKey, Ports.free(), stepMillis, certs);
    Rig rig = new Rig(cluster + ":", "chaos_" + hex, redis, pg, driver, dir, otherKey);
    Map<String, String> env = new HashMap<>(Map.ofEntries(Map.entry("CONVEYOR_REDIS_URL", redis.url()),
        Map.entry("CONVEYOR_REDIS_EMBEDDED", "never"), Map.entry("CONVEYOR_REDIS_PREFIX", rig.prefix),
        Map.entry("CONVEYOR_CLUSTER_NAME", cluster), Map.entry("CONVEYOR_CLUSTER_CONFIG", clusterXml.toString()),
        Map.entry("CONVEYOR_PIPELINES_DIR", dir.resolve("pipelines").toString()),
        Map.entry("CONVEYOR_ARCHIVE_URL", pg.url()), Map.entry("CONVEYOR_ARCHIVE_TABLE", rig.table),
        Map.entry("CONVEYOR_ARCHIVE_DELAY", "2s"), Map.entry("CONVEYOR_API_KEYS", "chaos:client+admin:" + apiKey + ","
            + OTHER_OWNER + ":client+admin:" + otherKey),
        Map.entry("CONVEYOR_WEBHOOKS_SECRET", "whsec_" + java.util.Base64.getEncoder().encodeToString(
            "the-chaos-suite-secret-32-bytes!".getBytes(java.nio.charset.StandardCharsets.UTF_8))),
        Map.entry("CONVEYOR_WEBHOOKS_ALLOW_PRIVATE_TARGETS", "true")));
    env.putAll(extraEnv);
    for (int i = 0; i < count; i++) {
      Map<String, String> nodeEnv = new HashMap<>(env);
      if (certs != null) {
        nodeEnv.putAll(certs.nodeEnv("node" + i));
      }
      rig.nodes.add(NodeProc.start("node" + i, Ports.free(), nodeEnv, logback, dir.resolve("node" + i + ".log")));
      if (oneAtATime) {
        rig.nodes.get(i).awaitStarted(180_000);
      }
    }
    for (NodeProc n : rig.nodes) {
      n.awaitStarted(180_000);
    }
    return rig;
  }

  /** Eventbus steps (three for most scenarios), all served by the driver; not idempotent with --not-idempotent. */
  private static String pipeline(boolean notIdempotent, int steps) {
    String step = "{\"type\":\"eventbus\",\"params\":{\"address\":\"" + Driver.STEP_ADDRESS + "\"}"
        + (notIdempotent ? ",\"idempotent\":false}" : "}");
    return "{\"name\":\"" + PIPELINE + "\",\"nodeGroup\":\"master\",\"transactionType\":true,\"steps\":["
        + String.join(",", java.util.Collections.nCopies(steps, step)) + "]}";
  }

  /** The shipped cluster.xml on ports of the run's own: n consecutive ports, each a listed member. */
  static Path clusterXml(Path dir, int base, int n) throws IOException {
    String xml = Files.readString(Path.of("cluster.xml"));
    StringBuilder members = new StringBuilder();
    for (int p = base; p < base + n; p++) {
      members.append("<member>127.0.0.1:").append(p).append("</member>");
    }
    String out = xml.replaceFirst("<port [^>]*>\\d+</port>",
        "<port auto-increment=\"true\" port-count=\"" + n + "\">" + base + "</port>")
        .replaceFirst("<member>[^<]*</member>", Matcher.quoteReplacement(members.toString()));
    Path file = dir.resolve("cluster.xml");
    Files.writeString(file, out);
    return file;
  }

  /** The shipped logging config, plus Hazelcast's membership lines (NodeProc reads each node's view there). */
  static Path logback(Path dir) throws IOException {
    String xml = Files.readString(Path.of("conf/logback.xml")).replace("<root ",
        "<logger name=\"com.hazelcast.internal.cluster\" level=\"INFO\"/>\n  <root ");
    Path file = dir.resolve("logback.xml");
    Files.writeString(file, xml);
    return file;
  }

  List<NodeProc> live() {
    return nodes.stream().filter(NodeProc::live).toList();
  }

  NodeProc byId(String nodeId) {
    return nodes.stream().filter(n -> n.nodeId().equals(nodeId)).findFirst().orElse(null);
  }

  /** The nodeId in a role's lease key (reaper, toArchive, webhook), "" when none, null when Redis is silent. */
  String leader(String keyName) {
    return redis.string("GET", prefix + keyName + "Lock1");
  }

  /** Who holds what, e.g. "reaper=node1 archive=node1 webhook=node2". */
  String leaders() {
    StringBuilder s = new StringBuilder();
    for (String role : List.of("reaper", "toArchive", "webhook")) {
      String id = leader(role);
      NodeProc n = id == null || id.isEmpty() ? null : byId(id);
      s.append(s.length() == 0 ? "" : " ").append(role).append('=').append(n == null ? id : n.name);
    }
    return s.toString();
  }

  List<String> inflight(String nodeId) {
    String out = redis.cli("ZRANGE", prefix + "inflightZ:" + nodeId, "0", "-1");
    return out == null ? List.of() : out.lines().filter(l -> !l.isBlank()).toList();
  }

  long processing() {
    return redis.integer("ZCARD", prefix + "processingZ");
  }

  /**
   * The transactions of ids not yet running elsewhere or done: their state still names the node, or is
   * queued. A state that is gone (archived) has moved on. Null when Redis did not answer.
   */
  List<String> notMovedOn(List<String> ids, String nodeId) {
    List<String> cmds = ids.stream().map(id -> "HMGET " + prefix + "stateH:" + id + " processingState node").toList();
    List<String> out = ids.isEmpty() ? List.of() : redis.pipe(cmds);
    if (out == null || out.size() < 2 * ids.size()) {
      return null;
    }
    List<String> left = new ArrayList<>();
    for (int i = 0; i < ids.size(); i++) {
      String state = out.get(2 * i);
      String node = out.get(2 * i + 1);
      boolean moved = state.isEmpty() || state.equals("complete") || state.equals("sleeping")
          || (state.equals("processing") && !node.equals(nodeId));
      if (!moved) {
        left.add(ids.get(i));
      }
    }
    return left;
  }

  /** How many transactions the reaper took over from the node (its node-dead events summed), or -1 if none. */
  long takenOver(String nodeId) {
    List<io.vertx.core.json.JsonObject> dead = nodeDeadEvents();
    return dead.stream().noneMatch(d -> nodeId.equals(d.getString("nodeId"))) ? -1 : dead.stream()
        .filter(d -> nodeId.equals(d.getString("nodeId"))).mapToLong(d -> d.getLong("recovered", 0L)).sum();
  }

  /** Every node the reaper took over (a node-dead event names it), in the order taken. */
  List<String> reaped() {
    return nodeDeadEvents().stream().map(d -> d.getString("nodeId")).distinct().toList();
  }

  /** The details of every node-dead event in eventsL (none when Redis is silent). */
  private List<io.vertx.core.json.JsonObject> nodeDeadEvents() {
    String out = redis.cli("LRANGE", prefix + "eventsL", "0", "-1");
    List<io.vertx.core.json.JsonObject> dead = new ArrayList<>();
    for (String line : out == null ? List.<String>of() : out.lines().toList()) {
      try {
        io.vertx.core.json.JsonObject e = new io.vertx.core.json.JsonObject(line);
        if ("node-dead".equals(e.getString("kind")) && e.getJsonObject("details") != null) {
          dead.add(0, e.getJsonObject("details")); // eventsL is newest first
        }
      } catch (RuntimeException notJson) {
        // not an event line
      }
    }
    return dead;
  }

  /** Every txId waiting to be archived (due, held by a leader, or not due yet). */
  List<String> archiveWaiting() {
    String out = redis.cli("ZRANGE", prefix + "toArchiveZ", "0", "-1");
    return out == null ? new ArrayList<>() : new ArrayList<>(out.lines().filter(l -> !l.isBlank()).toList());
  }

  /** Those of ids still in toArchiveZ (not archived yet); all of them when Redis does not answer. */
  java.util.Set<String> stillWaiting(List<String> ids) {
    java.util.Set<String> left = new java.util.HashSet<>();
    for (int i = 0; i < ids.size(); i += 500) {
      List<String> part = ids.subList(i, Math.min(ids.size(), i + 500));
      List<String> args = new ArrayList<>(List.of("ZMSCORE", prefix + "toArchiveZ"));
      args.addAll(part);
      String out = redis.cli(args.toArray(String[]::new));
      if (out == null) {
        return new java.util.HashSet<>(ids);
      }
      List<String> scores = out.lines().toList();
      for (int j = 0; j < part.size() && j < scores.size(); j++) {
        if (!scores.get(j).isBlank()) {
          left.add(part.get(j));
        }
      }
    }
    return left;
  }

  /** Every live node's /health/ready answers 200. */
  boolean allReady() {
    return live().stream().allMatch(n -> driver.call(n.httpPort, io.vertx.core.http.HttpMethod.GET, "/health/ready",
        null, 2000).await().status() == 200);
  }

  private static final Pattern CLIENT_ADDR = Pattern.compile("addr=127\\.0\\.0\\.1:(\\d+)");
  // Java's sockets show as [::ffff:127.0.0.1]:port in ss
  private static final Pattern SOCKET = Pattern.compile(
      "(?:\\[::ffff:)?127\\.0\\.0\\.1\\]?:(\\d+)\\s+(?:\\[::ffff:)?127\\.0\\.0\\.1\\]?:(\\d+)\\s.*?pid=(\\d+)");

  /**
   * Redis clients per node, e.g. "7/7/7 (+2 other)": CLIENT LIST's addr (the client's local port) joined
   * with ss's socket owners. Null when Redis did not answer.
   */
  String clientsPerNode() {
    String list = redis.cli("CLIENT", "LIST");
    String ss = Procs.run(java.time.Duration.ofSeconds(5), List.of("ss", "-tnpH", "state", "established"));
    if (list == null) {
      return null;
    }
    Map<Integer, Long> pidByPort = new HashMap<>();
    if (ss != null) {
      ss.lines().forEach(l -> {
        Matcher m = SOCKET.matcher(l);
        if (m.find() && Integer.parseInt(m.group(2)) == redis.port()) {
          pidByPort.put(Integer.parseInt(m.group(1)), Long.parseLong(m.group(3)));
        }
      });
    }
    Map<Long, Integer> perPid = new HashMap<>();
    int total = 0;
    for (String l : list.lines().toList()) {
      Matcher m = CLIENT_ADDR.matcher(l);
      if (m.find()) {
        total++;
        perPid.merge(pidByPort.getOrDefault(Integer.parseInt(m.group(1)), -1L), 1, Integer::sum);
      }
    }
    StringBuilder s = new StringBuilder();
    for (NodeProc n : nodes) {
      int c = perPid.getOrDefault(n.pid(), 0);
      s.append(s.length() == 0 ? "" : "/").append(c);
    }
    return s + " (total " + total + ")";
  }

  /** The driver leaves the cluster first, so it does not watch the nodes die. */
  void close() {
    driver.close();
    nodes.forEach(NodeProc::close);
  }
}
