package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.bus.Addresses;
import io.conveyor.redis.Keys;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.RedisClusterFixture;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * Each partition's ring and notify subscription stands on its own (Subscriptions): on a Redis Cluster of its own
 * (3 masters, a replica each, 3 partitions, one per master), the master of partition 0 is killed, and an idle node
 * still hears the other partitions' rings and completions before the replica takes over. Excluded from the Redis
 * Cluster pass (its cluster is its own).
 */
class SubscriptionFailoverTest {
  private static final String PIPELINE = "{'name':'one','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'util/fixed-reply','params':{'reply':{}}}]}";
  private final Set<String> completed = ConcurrentHashMap.newKeySet();

  @Test
  void while_partition_0s_master_is_down_an_idle_node_runs_and_hears_a_start_in_another_partition() {
    try (RedisClusterFixture cluster = cluster(); TestNode node = node(cluster)) {
      int dead = cluster.masterOfKey(node.keys.qRingL(0, "master"));
      int healthy = node.keys.all().stream()
          .filter(p -> cluster.masterOfKey(node.keys.qRingL(p, "master")) != dead).findFirst().orElseThrow();
      int replica = cluster.replicasOf(dead).get(0);
      assertRuns(node, start(node, healthy), "before the kill");

      cluster.kill(dead);
      String during = start(node, healthy);
      assertRuns(node, during, "while partition 0's master is down");
      assertEquals("slave", role(cluster, replica),
          "partition " + healthy + "'s start ran and was heard before partition 0's replica took over");

      cluster.awaitFailover(dead, Duration.ofSeconds(30));
      // partition 0's channels are subscribed again, on the promoted master: only then is a completion there heard
      // (one that came in the gap, up to the 2 s backoff, was not: a clean-clone run started and finished one there
      // before its notify subscription was back)
      awaitSubscribed(cluster, node.keys);
      String after = startOnceItAnswers(node, 0, Duration.ofSeconds(15), "a start in partition 0 after the failover");
      assertRuns(node, after, "after the failover");
    }
  }

  /**
   * SIGSTOP of partition 0's master (it answers nothing and closes nothing): once its replica has taken over, a start
   * in partition 0 runs and its completion is heard, while the old master is still stopped. The subscriptions find
   * their connection to it silent (a PING unanswered), end it, and subscribe partition 0 again on the new master;
   * before, they waited on the stopped one until it came back.
   */
  @Test
  void after_partition_0s_master_is_paused_and_replaced_its_rings_and_completions_are_heard_again() {
    try (RedisClusterFixture cluster = cluster(); TestNode node = node(cluster)) {
      int paused = cluster.masterOfKey(node.keys.qRingL(0, "master"));
      int replica = cluster.replicasOf(paused).get(0);
      assertRuns(node, start(node, 0), "before the pause");
      cluster.pause(paused, true);
      try {
        Eventually.until(Duration.ofSeconds(30), "partition 0's replica to take over", () -> role(cluster, replica),
            r -> r.equals("master"));
        // partition 0's channels subscribed again on the new master, the old one still stopped: only then is a
        // completion there heard (one that ends in the gap is not: the node's own traffic can find the new master
        // before the subscriptions have given up on the old one)
        for (String channel : java.util.List.of(node.keys.qRingL(0, "master"), node.keys.notifyChannel(0))) {
          Eventually.until(Duration.ofSeconds(15), "the node to subscribe to " + channel + " on the new master",
              () -> cluster.cmd(replica, "PUBSUB", "SHARDNUMSUB", channel), r -> r.trim().endsWith("1"));
        }
        String after = startOnceItAnswers(node, 0, Duration.ofSeconds(20), "a start in partition 0 on the new master");
        assertRuns(node, after, "after the replica took over, the old master still stopped");
        assertTrue(ProcessHandle.of(cluster.pid(paused)).map(ProcessHandle::isAlive).orElse(false),
            "the paused master is still there, stopped");
      } finally {
        cluster.pause(paused, false);
      }
    }
  }

  /**
   * A cluster of 3 masters with a replica each, without full coverage: Redis's default (yes) has the healthy masters
   * refuse every command between a master's FAIL mark and its replica's promotion.
   */
  private static RedisClusterFixture cluster() {
    RedisClusterFixture cluster = RedisClusterFixture.start(3, 1);
    cluster.ports().forEach(port -> cluster.cmd(port, "CONFIG", "SET", "cluster-require-full-coverage", "no"));
    return cluster;
  }

  /**
   * A node on it, 3 partitions, its bus's completions kept, subscribed everywhere. An idle wait of a minute: the node
   * looks into a partition unrung only every five, so only a ring runs work.
   */
  private TestNode node(RedisClusterFixture cluster) {
    TestNode node = TestNode.withPrefix(TestRedis.newPrefix().replaceAll("[{}]", ""))
        .redis("cluster", cluster.endpoints(), "").set("REDIS_PARTITIONS", "3").set("NODE_IDLE_WAIT", "60s")
        .pipeline("one", PIPELINE).start(new TestSteps().registry());
    node.node().vertx().eventBus().<JsonObject>consumer(Addresses.TX_COMPLETED,
        m -> completed.add(m.body().getString("txId"))).completion().await();
    awaitSubscribed(cluster, node.keys);
    return node;
  }

  /** A start in partition p, tried until it is taken (its master may be failing over), within the bound. */
  private static String startOnceItAnswers(TestNode node, int p, Duration bound, String what) {
    return Eventually.until(bound, what, () -> {
      try {
        return start(node, p);
      } catch (RuntimeException e) {
        return null;
      }
    }, id -> id != null);
  }

  /** A start in partition p: an externalId that lands there (the start is not handed to the node: it rings). */
  private static String start(TestNode node, int p) {
    String externalId;
    do {
      externalId = UUID.randomUUID().toString();
    } while (node.keys.partitionFor("acme", externalId) != p);
    return node.transactions.start(new JsonObject().put("type", "one").put("owner", "acme")
        .put("externalId", externalId).put("input", new JsonObject())).await().txId();
  }

  /** The transaction succeeded and this node's event bus heard its completion (the notify subscription). */
  private void assertRuns(TestNode node, String txId, String when) {
    assertEquals("success", node.awaitFinal(txId, Duration.ofSeconds(20)).status().wire(), when);
    Eventually.until(Duration.ofSeconds(10), "the completion of " + txId + " heard " + when,
        () -> completed.contains(txId), heard -> heard);
  }

  /** The node's ring and notify subscriptions are on every partition's master (one subscriber each). */
  private static void awaitSubscribed(RedisClusterFixture cluster, Keys keys) {
    for (int p : keys.all()) {
      for (String channel : java.util.List.of(keys.qRingL(p, "master"), keys.notifyChannel(p))) {
        int master = cluster.masterOfKey(channel);
        Eventually.until(Duration.ofSeconds(10), "the node to subscribe to " + channel,
            () -> cluster.cmd(master, "PUBSUB", "SHARDNUMSUB", channel), r -> r.trim().endsWith("1"));
      }
    }
  }

  private static String role(RedisClusterFixture cluster, int port) {
    return cluster.cmd(port, "ROLE").lines().findFirst().orElse("");
  }
}
