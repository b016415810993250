package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.api.ConveyorClient;
import io.conveyor.bus.Addresses;
import io.conveyor.bus.LeaseChanged;
import io.conveyor.bus.Messages;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.NodeProcess;
import io.conveyor.testing.RedisClusterFixture;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Three node processes on a 3-master Redis Cluster, six partitions: the leader roles of every partition
 * are spread over the nodes (none holds more than its share), and when one node is killed (kill -9) under
 * load its partitions' roles move to the others and every transaction still finishes.
 */
class PartitionLeadersIT {
  private static final Logger log = LoggerFactory.getLogger(PartitionLeadersIT.class);
  private static final int TRANSACTIONS = 1500;

  /** role/partition → nodeId that leads it now (as conveyor.lease.changed told). */
  private final Map<String, String> leaders = new ConcurrentHashMap<>();
  /** role/partition → when (nanoTime) it last got a leader. */
  private final Map<String, Long> ledSince = new ConcurrentHashMap<>();

  @Test
  @Timeout(300)
  void a_killed_nodes_partitions_move_to_the_others_and_nothing_is_lost() throws Exception {
    String cluster = TestCluster.newName();
    String table = TestDatabase.newTable();
    Path pipelines = Files.createTempDirectory("pipelines");
    Files.writeString(pipelines.resolve("two.json"), ("{'name':'two','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'a':1}}},"
        + "{'type':'eventbus','params':{'address':'steps.slow'}}]}").replace('\'', '"'));
    Vertx app = TestCluster.join(cluster);
    List<NodeProcess> nodes = new ArrayList<>();
    try (RedisClusterFixture redis = RedisClusterFixture.start(3, 1)) {
      app.eventBus().<JsonObject>consumer("steps.slow", m -> app.setTimer(20, t -> m.reply(
          new JsonObject().put("output", m.body())))).completion().await();
      app.eventBus().consumer(Addresses.LEASE_CHANGED, m -> {
        LeaseChanged c = Messages.decode(m.body(), LeaseChanged.class);
        String key = c.role() + "/" + c.partition();
        if (c.leads()) {
          leaders.put(key, c.nodeId());
          ledSince.put(key, System.nanoTime());
        } else {
          leaders.remove(key, c.nodeId());
        }
      }).completion().await();
      List<String> nodeIds = new ArrayList<>();
      String prefix = "pl-" + TestRedis.newPrefix().replaceAll("[{}]", "");
      for (int i = 0; i < 3; i++) {
        Map<String, String> env = new HashMap<>(Map.of("CONVEYOR_REDIS_MODE", "cluster",
            "CONVEYOR_REDIS_ENDPOINTS", String.join(",", redis.endpoints()), "CONVEYOR_REDIS_URL",
            redis.endpoints().get(0), "CONVEYOR_REDIS_PREFIX", prefix, "CONVEYOR_CLUSTER_NAME", cluster, "CONVEYOR_PIPELINES_DIR", pipelines.toString(),
            "CONVEYOR_NODE_WORKERS", "50", "CONVEYOR_HTTP_PORT", "0", "CONVEYOR_ARCHIVE_URL", TestDatabase.url(),
            "CONVEYOR_ARCHIVE_TABLE", table));
        env.put("CONVEYOR_REDIS_PARTITIONS", "6"); // two per node: the share rule has something to share
        env.put("CONVEYOR_ARCHIVE_DELAY", "1s");
        env.put("CONVEYOR_API_KEYS", "it:client:k-it"); // the event-bus API asks the client for it
        nodes.add(NodeProcess.start("partition-leaders-" + i, env));
      }
      for (NodeProcess n : nodes) {
        nodeIds.add(n.awaitLine(" started: group master", Duration.ofSeconds(90))
            .replaceAll(".*node (node-\\w+).*", "$1"));
      }
      // 4 roles × 6 partitions, and the reaper's judging: each led, none by more than its share
      Eventually.until(Duration.ofSeconds(30), "every role of every partition to have a leader, spread",
          () -> Map.copyOf(leaders), l -> l.size() == 25 && spread(l, nodeIds));
      log.info("leaders before the kill: {}", new java.util.TreeMap<>(leaders));

      ConveyorClient client = new ConveyorClient(app, "k-it");
      List<Future<TxSummary>> starts = new ArrayList<>();
      for (int i = 0; i < TRANSACTIONS; i++) {
        starts.add(client.start("two", "it", new JsonObject().put("i", i)));
      }
      Future.all(starts).await();
      String dead = nodeIds.get(1);
      List<String> held = leaders.entrySet().stream().filter(e -> e.getValue().equals(dead)).map(Map.Entry::getKey)
          .toList();
      nodes.get(1).kill();
      long killedAt = System.nanoTime();
      Eventually.until(Duration.ofSeconds(15), "the killed node's roles " + held + " to move",
          () -> held.stream().filter(k -> dead.equals(leaders.get(k)) || !leaders.containsKey(k)).toList(),
          List::isEmpty);
      long slowest = held.stream().mapToLong(k -> (ledSince.get(k) - killedAt) / 1_000_000).max().orElse(0);
      log.info("the killed node led {}; each had a new leader within {} ms of the kill", held, slowest);
      assertTrue(!held.isEmpty(), "the killed node led nothing: the roles were not spread");

      for (Future<TxSummary> f : starts) {
        String txId = f.result().txId();
        TxSummary s = Eventually.until(Duration.ofSeconds(60), txId + " to finish",
            () -> client.status(txId, "it").await(), t -> t.status().isFinal());
        assertEquals(TxStatus.SUCCESS, s.status(), txId + ": " + s.note());
      }
    } finally {
      for (NodeProcess n : nodes) {
        n.close();
      }
      app.close().await();
      TestDatabase.drop(table);
    }
  }

  /** Nobody leads more than its share of each role's partitions, rounded up. */
  private static boolean spread(Map<String, String> leaders, List<String> nodeIds) {
    for (String role : List.of("reaper", "archive", "webhooks", "scheduler")) {
      Map<String, Integer> per = new HashMap<>();
      leaders.forEach((k, node) -> {
        if (k.startsWith(role + "/") && !k.equals("reaper/-1")) {
          per.merge(node, 1, Integer::sum);
        }
      });
      if (per.values().stream().anyMatch(n -> n > (6 + nodeIds.size() - 1) / nodeIds.size())) {
        return false;
      }
    }
    return true;
  }
}
