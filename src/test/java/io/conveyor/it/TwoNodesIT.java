package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.api.ConveyorClient;
import io.conveyor.model.TxStatus;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.NodeProcess;
import io.conveyor.testing.TestCluster;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestRedis;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Two node processes from the fat jar, one cluster, one group: transactions started through one (the only
 * node with the api role) are run by both.
 */
class TwoNodesIT {

  @Test
  void transactions_started_through_one_node_are_run_by_both() throws Exception {
    String prefix = TestRedis.newPrefix();
    String cluster = TestCluster.newName();
    String table = TestDatabase.newTable();
    Map<String, String> env = Map.of("CONVEYOR_REDIS_URL", TestRedis.url(), "CONVEYOR_REDIS_PREFIX", prefix,
        "CONVEYOR_CLUSTER_NAME", cluster, "CONVEYOR_NODE_WORKERS", "5", "CONVEYOR_ARCHIVE_URL", TestDatabase.url(),
        "CONVEYOR_ARCHIVE_TABLE", table, "CONVEYOR_API_KEYS", "it:client:k-it");
    // the test's member first: nodes that start side by side with no member to join race to found the cluster,
    // which took 5.7 s of Hazelcast's join against 0.5-2.5 s for a node joining a cluster that is there
    Vertx app = TestCluster.join(cluster);
    try (NodeProcess one = NodeProcess.start("two-nodes-1", with(env, "CONVEYOR_HTTP_PORT",
        Integer.toString(TestRedis.freePort())));
         NodeProcess two = NodeProcess.start("two-nodes-2", with(with(env, "CONVEYOR_HTTP_PORT",
             Integer.toString(TestRedis.freePort())), "CONVEYOR_NODE_ROLES", "dequeue"))) {
      one.awaitLine(" started: group master", Duration.ofSeconds(90));
      two.awaitLine(" started: group master", Duration.ofSeconds(90));
      ConveyorClient client = new ConveyorClient(app, "k-it");
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        ids.add(client.start("example", "it", new JsonObject().put("i", i)).await().txId());
      }
      Set<String> nodes = new HashSet<>();
      for (String id : ids) {
        assertEquals(TxStatus.SUCCESS, Eventually.until(Duration.ofSeconds(30), id + " to finish",
            () -> client.status(id, "it").await(), s -> s.status().isFinal()).status());
        nodes.add(TestRedis.cmd("HGET", prefix + "stateH:" + id, "node").toString());
      }
      // a node takes at most its 5 slots; a full take rings the group, so the other node wakes and takes too
      assertEquals(2, nodes.size(), "nodes that ran the work: " + nodes);
    } finally {
      app.close().await();
      TestRedis.drop(prefix);
      TestDatabase.drop(table);
    }
  }

  private static Map<String, String> with(Map<String, String> env, String key, String value) {
    Map<String, String> m = new java.util.HashMap<>(env);
    m.put(key, value);
    return m;
  }
}
