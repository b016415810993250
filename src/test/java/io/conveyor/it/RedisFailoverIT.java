package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.domain.Transactions;
import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.RedisClusterFixture;
import io.conveyor.testing.RedisSentinelFixture;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis master killed (kill -9) under load, in a Redis Cluster and under Sentinel: a replica takes over
 * (each master has two, so the new one still has a replica to WAIT for),
 * the node carries on without a restart, and with redis.waitReplicas=1 every start the node acknowledged
 * survives and finishes. Without it, the test reports what was lost (Redis replicates asynchronously).
 */
class RedisFailoverIT {
  private static final Logger log = LoggerFactory.getLogger(RedisFailoverIT.class);
  private static final String PIPELINE = "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}";

  /** What a load run saw: the starts acknowledged, those refused, and when the first start after the kill landed. */
  private record Load(List<String> acknowledged, int refused, long firstAfterKillMs) {
  }

  private static TestNode node(String mode, List<String> endpoints, String masterName, int waitReplicas) {
    // the default layout of each mode: three partitions over the cluster's masters, one under Sentinel
    return TestNode.withPrefix(TestRedis.newPrefix().replaceAll("[{}]", "")).redis(mode, endpoints, masterName).set("REDIS_TIMEOUT", "1s")
        .set("REDIS_WAIT_REPLICAS", Integer.toString(waitReplicas)).set("REDIS_WAIT_TIMEOUT", "1s")
        .set("NODE_ROLES", "dequeue,api,reaper").set("NODE_WORKERS", "50").pipeline("order", PIPELINE);
  }

  /**
   * Starts transactions one after another for the given time, killing the master (kill) after a third of
   * it; a refused start (503 while there is no master) is not acknowledged and does not count.
   */
  private static Load load(Transactions client, Duration length, Runnable kill) {
    List<String> acknowledged = new ArrayList<>();
    int refused = 0;
    long began = System.nanoTime();
    long killAt = began + length.toNanos() / 3;
    long killedAt = 0;
    long firstAfter = -1;
    while (System.nanoTime() - began < length.toNanos()) {
      if (killedAt == 0 && System.nanoTime() >= killAt) {
        kill.run();
        killedAt = System.nanoTime();
      }
      try {
        TxSummary s = client.start(new JsonObject().put("type", "order").put("owner", "acme")
            .put("input", new JsonObject())).toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
        acknowledged.add(s.txId());
        if (killedAt != 0 && firstAfter < 0) {
          firstAfter = (System.nanoTime() - killedAt) / 1_000_000;
        }
      } catch (Exception e) {
        if (!(e.getCause() instanceof TxException)) {
          throw new AssertionError("a start failed with something other than a refusal: " + e, e);
        }
        refused++;
        // no master for the moment: pace the next try instead of spinning on refusals
        java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
    }
    return new Load(acknowledged, refused, firstAfter);
  }

  /** How many acknowledged transactions are gone; the rest must all finish (bounded wait). */
  private static int lostAndTheRestFinish(TestNode node, List<String> acknowledged) {
    List<String> lost = new ArrayList<>();
    for (String txId : acknowledged) {
      TxSummary s = Eventually.until(Duration.ofSeconds(60), txId + " to finish or be known lost",
          () -> node.store.reads.getState(txId).await(), st -> st == null || st.status().isFinal());
      if (s == null) {
        lost.add(txId);
      } else {
        assertEquals("success", s.status().wire(), txId);
      }
    }
    return lost.size();
  }

  @Test
  @Timeout(180)
  void a_cluster_master_killed_under_load_loses_no_acknowledged_start_with_wait_replicas() {
    try (RedisClusterFixture cluster = RedisClusterFixture.start(3, 2)) {
      int lostWithWait = run(cluster, 1);
      assertEquals(0, lostWithWait, "acknowledged starts lost with redis.waitReplicas=1");
    }
  }

  @Test
  @Timeout(180)
  void a_cluster_master_killed_under_load_without_wait_replicas_is_survived_and_its_losses_reported() {
    try (RedisClusterFixture cluster = RedisClusterFixture.start(3, 2)) {
      int lost = run(cluster, 0);
      // asynchronous replication may drop the last writes before the kill: reported, not asserted
      log.info("without redis.waitReplicas: {} acknowledged starts lost in the failover", lost);
    }
  }

  private int run(RedisClusterFixture cluster, int waitReplicas) {
    try (TestNode node = node("cluster", cluster.endpoints(), "", waitReplicas).start(new TestSteps().registry())) {
      // the master of partition 0: a third of the starts meet the failover
      int master = cluster.masterOfKey(node.keys.stateH(0, "x"));
      Load load = load(node.nodeTransactions(), Duration.ofSeconds(9), () -> cluster.kill(master));
      int lost = lostAndTheRestFinish(node, load.acknowledged());
      log.info("cluster, waitReplicas={}: {} starts acknowledged, {} refused during the failover, first start "
          + "after the kill {} ms after it, {} lost", waitReplicas, load.acknowledged().size(), load.refused(),
          load.firstAfterKillMs(), lost);
      assertTrue(load.firstAfterKillMs() >= 0, "no start landed after the master was killed");
      assertTrue(cluster.masterOfKey(node.keys.stateH(0, "x")) != master, "the replica did not take over");
      return lost;
    }
  }

  @Test
  @Timeout(180)
  void under_sentinel_the_node_follows_the_new_master_and_loses_no_acknowledged_start() {
    try (RedisSentinelFixture sentinel = RedisSentinelFixture.start("conveyor-test", 2)) {
      try (TestNode node = node("sentinel", sentinel.sentinelEndpoints(), "conveyor-test", 1)
          .start(new TestSteps().registry())) {
        int master = sentinel.masterPort();
        Load load = load(node.nodeTransactions(), Duration.ofSeconds(9), () -> sentinel.kill(master));
        int lost = lostAndTheRestFinish(node, load.acknowledged());
        log.info("sentinel, waitReplicas=1: {} starts acknowledged, {} refused during the failover, first start "
            + "after the kill {} ms after it, {} lost", load.acknowledged().size(), load.refused(),
            load.firstAfterKillMs(), lost);
        assertTrue(load.firstAfterKillMs() >= 0 && load.firstAfterKillMs() < 10_000,
            "the node did not follow the new master within 10 s: " + load.firstAfterKillMs() + " ms");
        assertEquals(0, lost, "acknowledged starts lost with redis.waitReplicas=1");
      }
    }
  }
}
