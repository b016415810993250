package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.api.ConveyorClient;
import io.conveyor.bus.Addresses;
import io.conveyor.bus.Messages;
import io.conveyor.bus.NodeDied;
import io.conveyor.testing.BridgeClient;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.NodeProcess;
import io.conveyor.testing.TestCluster;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestRedis;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Three node processes run 1,000 five-step transactions while one of them is disrupted: killed, paused,
 * or stopped. All five steps are eventbus steps served here, which is how the test sees each execution.
 * The test's clustered Vert.x and a TCP-bridge client (an operator's key, on node 0) listen to
 * conveyor.node.died. The nodes archive to a PostgreSQL table of the test's own.
 */
class NodeFailureIT {
  private static final int TRANSACTIONS = 1000;
  private static final int WORKERS = 50;
  private final String prefix = TestRedis.newPrefix();
  private final String cluster = TestCluster.newName();
  private final String table = TestDatabase.newTable();
  private final int bridgePort = TestRedis.freePort();
  private final List<String> nodeIds = new ArrayList<>();
  private final Map<String, Integer> executions = new ConcurrentHashMap<>();
  private final AtomicLong disruptedAt = new AtomicLong();
  private final AtomicLong firstRecovered = new AtomicLong();
  private final List<NodeProcess> nodes = new ArrayList<>();
  private Vertx app;

  @BeforeEach
  void startNodes() throws Exception {
    Path pipelines = Files.createTempDirectory("pipelines");
    String step = "{'type':'eventbus','params':{'address':'steps.record'}}";
    Files.writeString(pipelines.resolve("five.json"), ("{'name':'five','nodeGroup':'master','transactionType':true,"
        + "'steps':[" + String.join(",", java.util.Collections.nCopies(5, step)) + "]}").replace('\'', '"'));
    app = TestCluster.join(cluster);
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
      Map<String, String> env = new HashMap<>(Map.of("CONVEYOR_REDIS_URL", TestRedis.url(),
          "CONVEYOR_REDIS_PREFIX", prefix, "CONVEYOR_CLUSTER_NAME", cluster, "CONVEYOR_PIPELINES_DIR",
          pipelines.toString(), "CONVEYOR_NODE_WORKERS", Integer.toString(WORKERS),
          "CONVEYOR_HTTP_PORT", Integer.toString(TestRedis.freePort()), "CONVEYOR_NODE_DRAIN_TIME", "200ms",
          "CONVEYOR_ARCHIVE_URL", TestDatabase.url(), "CONVEYOR_ARCHIVE_TABLE", table));
      env.put("CONVEYOR_HEARTBEAT_INTERVAL", "1s");
      env.put("CONVEYOR_HEARTBEAT_TTL", "3s");
      env.put("CONVEYOR_REAPER_INTERVAL", "500ms");
      env.put("CONVEYOR_API_KEYS", "ops:admin:secret-ops");
      if (i == 0) {
        env.put("CONVEYOR_BRIDGE_TCP_PORT", Integer.toString(bridgePort));
      }
      nodes.add(NodeProcess.start("node-failure-" + i, env));
    }
    for (NodeProcess n : nodes) {
      nodeIds.add(n.awaitLine(" started: group master", Duration.ofSeconds(90)).replaceAll(".*node (node-\\w+).*",
          "$1"));
    }
  }

  @AfterEach
  void stopNodes() {
    nodes.forEach(NodeProcess::close);
    app.close().await();
    TestRedis.drop(prefix);
    TestDatabase.drop(table);
  }

  /** Starts the transactions and waits until half the steps have run, so the disruption hits a busy node. */
  private void runUntilHalfway() {
    ConveyorClient client = new ConveyorClient(app);
    List<Future<?>> starts = new ArrayList<>();
    for (int i = 0; i < TRANSACTIONS; i++) {
      starts.add(client.start("five", "it", new JsonObject().put("i", i)));
    }
    Future.all(starts).await();
    Eventually.until(Duration.ofSeconds(60), "the run to be well under way", executions::size,
        n -> n > 2 * TRANSACTIONS);
    disruptedAt.set(System.nanoTime());
  }

  /** Every transaction succeeded, every step ran, nothing is left processing; answers the repeated steps. */
  private long assertAllSucceeded(String what) {
    Eventually.until(Duration.ofSeconds(120), "every transaction to finish",
        () -> TestRedis.cmd("ZCARD", prefix + "toArchiveZ").toInteger(), n -> n == TRANSACTIONS);
    long succeeded = TestRedis.keys(prefix + "stateH:").stream()
        .filter(k -> "success".equals(TestRedis.cmd("HGET", k, "status").toString())).count();
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
    app.eventBus().consumer(Addresses.NODE_DIED, m -> {
      heard.add(Messages.decode(m.body(), NodeDied.class));
      heardAt.add(System.nanoTime());
    }).completion().await();
    try (BridgeClient operator = new BridgeClient(bridgePort)) {
      listen(operator);
      runUntilHalfway();
      nodes.get(1).kill();
      long killedAt = System.nanoTime();
      String dead = nodeIds.get(1);
      JsonObject overBridge = Eventually.until(Duration.ofSeconds(5), "conveyor.node.died over the bridge",
          () -> nextFact(operator), f -> f != null && dead.equals(f.getString("nodeId")));
      long bridgeMs = (System.nanoTime() - killedAt) / 1_000_000;
      NodeDied died = Eventually.until(Duration.ofSeconds(5), "conveyor.node.died on the bus",
          () -> heard.stream().filter(d -> dead.equals(d.nodeId())).findFirst().orElse(null), d -> d != null);
      long busMs = (heardAt.get(heard.indexOf(died)) - killedAt) / 1_000_000;
      System.out.printf("kill -9: conveyor.node.died heard %d ms after (bus), %d ms after (bridge): %s%n", busMs,
          bridgeMs, died);
      assertTrue(busMs <= 5000 && bridgeMs <= 5000, busMs + " ms, " + bridgeMs + " ms");
      assertTrue(died.requeued() > 0, "the dead node was running work: " + died);
      assertEquals(died.requeued(), overBridge.getInteger("requeued"));
      assertEquals(died.reapedBy(), overBridge.getString("reapedBy"));
      assertTrue(nodeIds.contains(died.reapedBy()) && !dead.equals(died.reapedBy()), died.reapedBy());
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
    NodeProcess paused = nodes.get(1);
    paused.signal("STOP");
    // Hazelcast drops the silent member within seconds and another node takes its work over
    Eventually.until(Duration.ofSeconds(30), "the paused node's work to be taken over",
        () -> TestRedis.cmd("LLEN", prefix + "eventsL").toInteger(), n -> n > 0);
    paused.signal("CONT");
    assertAllSucceeded("kill -STOP, then -CONT");
    paused.awaitLine("refused (FENCED); another attempt owns it, dropping this one", Duration.ofSeconds(30));
    // it learnt from its heartbeat that it was taken over, and came back as a new incarnation
    paused.awaitLine("registered again (incarnation 2)", Duration.ofSeconds(30));
    // Redis judged liveness: only the paused node was taken over, never a healthy one its view had lost
    List<String> reaped = TestRedis.cmd("LRANGE", prefix + "eventsL", 0, -1).stream()
        .map(e -> new JsonObject(e.toString())).filter(e -> "node-dead".equals(e.getString("kind")))
        .map(e -> e.getJsonObject("details").getString("nodeId")).distinct().toList();
    assertEquals(List.of(nodeIds.get(1)), reaped);
  }

  @Test
  void a_node_stopped_with_sigterm_mid_run_leaves_nothing_behind() throws Exception {
    runUntilHalfway();
    NodeProcess stopped = nodes.get(1);
    String nodeId = nodeIds.get(1);
    stopped.terminate(Duration.ofSeconds(60));
    assertAllSucceeded("SIGTERM");
    assertEquals(0, TestRedis.cmd("EXISTS", prefix + "node:" + nodeId + ":heartbeat").toInteger());
    assertEquals(null, TestRedis.cmd("ZSCORE", prefix + "nodesZ", nodeId));
    assertEquals(0, TestRedis.cmd("EXISTS", prefix + "inflightZ:" + nodeId).toInteger());
  }
}
