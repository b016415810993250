package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.api.ConveyorClient;
import io.conveyor.bus.Addresses;
import io.conveyor.bus.Messages;
import io.conveyor.bus.NodeDied;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.BridgeClient;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.NodeProcess;
import io.conveyor.testing.TestCluster;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestRedis;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Three node processes run 1,000 five-step transactions while one of them is disrupted: killed, paused,
 * or stopped. All five steps are eventbus steps served here, which is how the test sees each execution.
 * The test's clustered Vert.x and a TCP-bridge client (an operator's key, on node 0) listen to
 * conveyor.node.died. The nodes archive to a PostgreSQL table of the test's own.
 * Nodes 0 and 2 and the test's Vert.x serve every test of the class; node 1, the one each test disrupts, is new in
 * each and gone after it (stopped, or reaped and out of the registry), so a test finds the cluster as the last
 * left it. What a test counts is its own: its transactions, the steps they ran, the events since it began.
 */
class NodeFailureIT {
  private static final int TRANSACTIONS = 1000;
  private static final int WORKERS = 50;
  private static final String prefix = TestRedis.newPrefix();
  private static final String cluster = TestCluster.newName();
  private static final String table = TestDatabase.newTable();
  private static final int bridgePort = TestRedis.freePort();
  private static final NodeProcess[] nodes = new NodeProcess[3];
  private static final String[] ids = new String[3];
  private static final int[] httpPorts = new int[3];
  private static final Map<String, Integer> executions = new ConcurrentHashMap<>();
  private static final AtomicLong disruptedAt = new AtomicLong();
  private static final AtomicLong firstRecovered = new AtomicLong();
  private static final List<MultiMap> held = new CopyOnWriteArrayList<>();
  private static Path pipelines;
  private static Vertx app;
  private final List<String> nodeIds = new ArrayList<>();
  private final List<String> started = new ArrayList<>();
  private long eventsBefore;

  @BeforeAll
  static void startNodes() throws Exception {
    pipelines = Files.createTempDirectory("pipelines");
    String step = "{'type':'eventbus','params':{'address':'steps.record'}}";
    Files.writeString(pipelines.resolve("five.json"), ("{'name':'five','nodeGroup':'master','transactionType':true,"
        + "'steps':[" + String.join(",", java.util.Collections.nCopies(5, step)) + "]}").replace('\'', '"'));
    Files.writeString(pipelines.resolve("held.json"), ("{'name':'held','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'eventbus','params':{'address':'steps.held'}}]}").replace('\'', '"'));
    app = TestCluster.join(cluster);
    // the held pipeline's step: its first attempt is never answered (its node is killed meanwhile), later ones are
    app.eventBus().<JsonObject>consumer("steps.held", m -> {
      held.add(m.headers());
      if (Long.parseLong(m.headers().get("attempt")) > 1) {
        m.reply(new JsonObject().put("output", new JsonObject().put("ranOn", m.headers().get("node"))));
      }
    }).completion().await();
    app.eventBus().<JsonObject>consumer("steps.record", m -> {
      executions.merge(m.headers().get("txId") + "#" + m.headers().get("step"), 1, Integer::sum);
      if (disruptedAt.get() > 0 && Long.parseLong(m.headers().get("attempt")) > 1) {
        firstRecovered.compareAndSet(0, System.nanoTime());
      }
      // every other step takes a while, so a node has work in flight when it is disrupted
      long ms = Integer.parseInt(m.headers().get("step")) % 2 == 1 ? 50 : 0;
      app.setTimer(ms + 1, t -> m.reply(new JsonObject().put("output", m.body())));
    }).completion().await();
    for (int i = 0; i < 3; i++) {
      start(i);
    }
    for (int i = 0; i < 3; i++) {
      awaitStarted(i);
    }
  }

  private static void start(int i) throws java.io.IOException {
    httpPorts[i] = TestRedis.freePort();
    Map<String, String> env = new HashMap<>(Map.of("CONVEYOR_REDIS_URL", TestRedis.url(),
        "CONVEYOR_REDIS_PREFIX", prefix, "CONVEYOR_CLUSTER_NAME", cluster, "CONVEYOR_PIPELINES_DIR",
        pipelines.toString(), "CONVEYOR_NODE_WORKERS", Integer.toString(WORKERS),
        "CONVEYOR_HTTP_PORT", Integer.toString(httpPorts[i]), "CONVEYOR_NODE_DRAIN_TIME", "200ms",
        "CONVEYOR_ARCHIVE_URL", TestDatabase.url(), "CONVEYOR_ARCHIVE_TABLE", table));
    env.put("CONVEYOR_HEARTBEAT_INTERVAL", "1s");
    env.put("CONVEYOR_HEARTBEAT_TTL", "3s");
    env.put("CONVEYOR_REAPER_INTERVAL", "500ms");
    env.put("CONVEYOR_API_KEYS", "ops:admin:secret-ops,it:client:secret-it");
    // an earlier test's transactions stay in Redis, unarchived, as each test's did when it had nodes of its own
    env.put("CONVEYOR_ARCHIVE_DELAY", "1h");
    if (i == 0) {
      env.put("CONVEYOR_BRIDGE_TCP_PORT", Integer.toString(bridgePort));
    }
    if (i == 1) {
      // the node every test disrupts: idle, it waits on its ring without a new take each second, so its workers are
      // offered to its own starts the whole time (rings still wake it at once)
      env.put("CONVEYOR_NODE_IDLE_WAIT", "60s");
    }
    nodes[i] = NodeProcess.start("node-failure-" + i, env);
  }

  private static void awaitStarted(int i) {
    ids[i] = nodes[i].awaitLine(" started: group master", Duration.ofSeconds(90)).replaceAll(".*node (node-\\w+).*",
        "$1");
  }

  @BeforeEach
  void startNodeOne() throws Exception {
    if (nodes[1] == null) {
      start(1);
      awaitStarted(1);
    }
    nodeIds.addAll(List.of(ids));
    executions.clear();
    held.clear();
    disruptedAt.set(0);
    firstRecovered.set(0);
    eventsBefore = TestRedis.cmd("LLEN", prefix + "eventsL").toLong();
  }

  /** Node 1 stops (SIGTERM; CONT first, were it paused) or is gone already; then only nodes 0 and 2 are registered. */
  @AfterEach
  void stopNodeOne() throws Exception {
    NodeProcess one = nodes[1];
    nodes[1] = null;
    if (one.alive()) {
      one.signal("CONT");
      one.terminate(Duration.ofSeconds(60));
    }
    Eventually.until(Duration.ofSeconds(30), "only nodes 0 and 2 to be registered",
        () -> TestRedis.cmd("ZRANGE", prefix + "nodesZ", 0, -1).stream().map(Object::toString).sorted().toList(),
        registered -> registered.equals(java.util.stream.Stream.of(ids[0], ids[2]).sorted().toList()));
  }

  @AfterAll
  static void stopNodes() {
    for (NodeProcess n : nodes) {
      if (n != null) {
        n.close();
      }
    }
    if (app != null) {
      app.close().await();
    }
    TestRedis.drop(prefix);
    TestDatabase.drop(table);
  }

  /** The events written since this test began (eventsL is newest first, capped at 1,000). */
  private List<JsonObject> newEvents() {
    long fresh = TestRedis.cmd("LLEN", prefix + "eventsL").toLong() - eventsBefore;
    return fresh <= 0 ? List.of() : TestRedis.cmd("LRANGE", prefix + "eventsL", 0, fresh - 1).stream()
        .map(e -> new JsonObject(e.toString())).toList();
  }

  /** Starts the transactions and waits until half the steps have run, so the disruption hits a busy node. */
  private void runUntilHalfway() {
    ConveyorClient client = new ConveyorClient(app, "secret-it");
    List<Future<TxSummary>> starts = new ArrayList<>();
    for (int i = 0; i < TRANSACTIONS; i++) {
      starts.add(client.start("five", "it", new JsonObject().put("i", i)));
    }
    Future.all(starts).await();
    starts.forEach(f -> started.add(f.result().txId()));
    Eventually.until(Duration.ofSeconds(60), "the run to be well under way", executions::size,
        n -> n > 2 * TRANSACTIONS);
    disruptedAt.set(System.nanoTime());
  }

  /** Every transaction succeeded, every step ran, nothing is left processing; answers the repeated steps. */
  private long assertAllSucceeded(String what) {
    Object[] due = java.util.stream.Stream.concat(java.util.stream.Stream.of("ZMSCORE", prefix + "toArchiveZ"),
        started.stream()).toArray();
    Eventually.until(Duration.ofSeconds(120), Duration.ofMillis(100), "every transaction to finish",
        () -> TestRedis.cmd(due).stream().filter(java.util.Objects::nonNull).count(), n -> n == TRANSACTIONS);
    long succeeded = started.stream()
        .filter(id -> "success".equals(String.valueOf(TestRedis.cmd("HGET", prefix + "stateH:" + id, "status"))))
        .count();
    long repeated = executions.values().stream().filter(n -> n > 1).count();
    System.out.printf("%s: %d of %d succeeded; %d step executions repeated; first recovered step %d ms after%n",
        what, succeeded, TRANSACTIONS, repeated,
        firstRecovered.get() == 0 ? -1 : (firstRecovered.get() - disruptedAt.get()) / 1_000_000);
    assertEquals(TRANSACTIONS, succeeded);
    assertEquals(5 * TRANSACTIONS, executions.size(), "a recorded step is missing");
    assertEquals(0, TestRedis.cmd("ZCARD", prefix + "processingZ").toInteger());
    return repeated;
  }

  @Test
  void killing_a_node_mid_run_loses_nothing_and_repeats_only_what_it_was_running() throws Exception {
    List<NodeDied> heard = new CopyOnWriteArrayList<>();
    List<Long> heardAt = new CopyOnWriteArrayList<>();
    var listener = app.eventBus().consumer(Addresses.NODE_DIED, m -> {
      heard.add(Messages.decode(m.body(), NodeDied.class));
      heardAt.add(System.nanoTime());
    });
    listener.completion().await();
    try (BridgeClient operator = new BridgeClient(bridgePort)) {
      listen(operator);
      runUntilHalfway();
      nodes[1].kill();
      long killedAt = System.nanoTime();
      String dead = nodeIds.get(1);
      // a bound to wait within, not a timing asserted (the time is printed below)
      JsonObject overBridge = Eventually.until(Duration.ofSeconds(30), "conveyor.node.died over the bridge",
          () -> nextFact(operator), f -> f != null && dead.equals(f.getString("nodeId")));
      long bridgeMs = (System.nanoTime() - killedAt) / 1_000_000;
      NodeDied died = Eventually.until(Duration.ofSeconds(30), "conveyor.node.died on the bus",
          () -> heard.stream().filter(d -> dead.equals(d.nodeId())).findFirst().orElse(null), d -> d != null);
      long busMs = (heardAt.get(heard.indexOf(died)) - killedAt) / 1_000_000;
      System.out.printf("kill -9: conveyor.node.died heard %d ms after (bus), %d ms after (bridge): %s%n", busMs,
          bridgeMs, died);
      assertTrue(died.requeued() > 0, "the dead node was running work: " + died);
      assertEquals(died.requeued(), overBridge.getInteger("requeued"));
      assertEquals(died.reapedBy(), overBridge.getString("reapedBy"));
      assertTrue(nodeIds.contains(died.reapedBy()) && !dead.equals(died.reapedBy()), died.reapedBy());
    } finally {
      listener.unregister().await();
    }
    long repeated = assertAllSucceeded("kill -9");
    // only what the dead node was running can run again: at most one step for each of its slots
    assertTrue(repeated <= WORKERS, repeated + " repeated step executions");
  }

  /** Registers the operator for conveyor.node.died, and waits until a probe published there reaches it. */
  private void listen(BridgeClient operator) throws Exception {
    operator.register(Addresses.NODE_DIED, "secret-ops");
    JsonObject probe = Messages.encode(new NodeDied("probe", "a probe", 0, "test", 0L));
    Eventually.until(Duration.ofSeconds(10), "the operator's registration to reach the cluster", () -> {
      app.eventBus().publish(Addresses.NODE_DIED, probe);
      return nextFact(operator);
    }, f -> f != null && "probe".equals(f.getString("nodeId")));
  }

  /** The body of the next fact the bridge brings within 200 ms, or null. */
  private static JsonObject nextFact(BridgeClient operator) {
    try {
      JsonObject frame = operator.poll(Duration.ofMillis(200));
      return frame == null ? null : frame.getJsonObject("body");
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void a_paused_node_that_comes_back_finds_its_late_writes_refused() throws Exception {
    runUntilHalfway();
    NodeProcess paused = nodes[1];
    paused.pause();
    // Hazelcast drops the silent member within seconds and another node takes its work over
    Eventually.until(Duration.ofSeconds(30), "the paused node's work to be taken over", () -> newEvents().size(),
        n -> n > 0);
    paused.signal("CONT");
    assertAllSucceeded("kill -STOP, then -CONT");
    paused.awaitLine("refused (FENCED); another attempt owns it, dropping this one", Duration.ofSeconds(30));
    // it learnt from its heartbeat that it was taken over, and came back as a new incarnation
    paused.awaitLine("registered again (incarnation 2)", Duration.ofSeconds(30));
    // Redis judged liveness: only the paused node was taken over, never a healthy one its view had lost
    List<String> reaped = newEvents().stream().filter(e -> "node-dead".equals(e.getString("kind")))
        .map(e -> e.getJsonObject("details").getString("nodeId")).distinct().toList();
    assertEquals(List.of(nodeIds.get(1)), reaped);
  }

  @Test
  void a_node_stopped_with_sigterm_mid_run_leaves_nothing_behind() throws Exception {
    runUntilHalfway();
    NodeProcess stopped = nodes[1];
    String nodeId = nodeIds.get(1);
    stopped.terminate(Duration.ofSeconds(60));
    assertAllSucceeded("SIGTERM");
    assertEquals(0, TestRedis.cmd("EXISTS", prefix + "node:" + nodeId + ":heartbeat").toInteger());
    assertEquals(null, TestRedis.cmd("ZSCORE", prefix + "nodesZ", nodeId));
    assertEquals(0, TestRedis.cmd("EXISTS", prefix + "inflightZ:" + nodeId).toInteger());
  }

  /**
   * A start made through an idle node is handed to that node's workers in the start's script, never queued: when
   * the node dies running it, the reaper puts it back all the same, and another node runs it.
   */
  @Test
  void a_node_killed_running_work_its_own_start_handed_it_loses_none_of_it() throws Exception {
    String starter = nodeIds.get(1);
    HttpClient http = HttpClient.newHttpClient();
    // its workers are offered to its starts once its first take found the queues empty: that take's reply is counted
    Eventually.until(Duration.ofSeconds(10), "the node's first take to come back", () -> {
      try {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + httpPorts[1] + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body()
            .lines().anyMatch(l -> l.startsWith("conveyor_lua_script_seconds_count") && l.contains("script=\"dequeue\"")
                && !l.endsWith(" 0.0"));
      } catch (java.io.IOException | InterruptedException e) {
        return false;
      }
    }, ok -> ok);
    HttpResponse<String> r = http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPorts[1]
            + "/api/v1/transactions")).header("Authorization", "Bearer secret-it")
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"type\":\"held\",\"input\":{}}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(202, r.statusCode(), r.body());
    String txId = new JsonObject(r.body()).getString("txId");
    MultiMap first = Eventually.until(Duration.ofSeconds(10), "the step's first attempt",
        () -> held.isEmpty() ? null : held.get(0), h -> h != null);
    assertEquals(txId, first.get("txId"));
    assertEquals(starter, first.get("node"), "the node the start went through runs it: its own start handed it over");
    assertEquals("1", first.get("attempt"));
    assertTrue(TestRedis.cmd("ZSCORE", prefix + "inflightZ:" + starter, txId) != null, "recorded as the node's");
    nodes[1].kill();
    MultiMap again = Eventually.until(Duration.ofSeconds(30), "another node to run it again",
        () -> held.size() > 1 ? held.get(held.size() - 1) : null, h -> h != null);
    assertEquals(txId, again.get("txId"));
    assertTrue(!starter.equals(again.get("node")) && nodeIds.contains(again.get("node")), again.get("node"));
    Eventually.until(Duration.ofSeconds(30), "the transaction to succeed",
        () -> String.valueOf(TestRedis.cmd("HGET", prefix + "stateH:" + txId, "status")), "success"::equals);
    assertEquals(2, held.size(), "it ran twice: once on the dead node, once after");
    assertEquals(0, TestRedis.cmd("EXISTS", prefix + "inflightZ:" + starter).toInteger());
    assertEquals(null, TestRedis.cmd("ZSCORE", prefix + "processingZ", txId));
  }
}
