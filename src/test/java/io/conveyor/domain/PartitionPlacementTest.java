package io.conveyor.domain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.PartitionHealth;
import io.conveyor.redis.RedisUnavailable;
import io.conveyor.redis.StoreContext;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.RedisClusterFixture;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Starts placed by partition health (issue 36), on a node with three partitions (one Redis, or a Redis Cluster on
 * its pass): a start that may go anywhere avoids a failing partition; one bound to it by its externalId waits
 * redis.partitionWait for it, then answers 503 partition-unavailable naming it.
 */
class PartitionPlacementTest {
  private static final int FAILING = 1;
  private TestNode node;
  private Vertx vertx;
  /** The health these starts are placed by: the test's own, so that the node's probe does not mend it meanwhile. */
  private final PartitionHealth health = PartitionHealth.untracked(3);
  private Transactions transactions;

  @BeforeEach
  void start() {
    node = new TestNode().set("REDIS_PARTITIONS", "3").set("REDIS_PARTITION_WAIT", "300ms")
        .pipeline("plain", "{'name':'plain','nodeGroup':'master','transactionType':true,"
            + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .start(new TestSteps().registry());
    vertx = Vertx.vertx();
    Context context = vertx.getOrCreateContext();
    // made on a context, as an API verticle makes it: a bound start waits there
    transactions = Future.<Transactions>future(p -> context.runOnContext(v -> {
      StoreContext redis = node.node().redis().open(vertx).withHealth(health);
      p.complete(new Transactions(redis, node.node().catalog(), node.config(),
          Future.succeededFuture(node.node().archive()), new NodeMetrics(false)));
    })).await();
    health.failed(FAILING, new RedisUnavailable(new ConnectException("Connection refused (test)")));
  }

  @AfterEach
  void stop() {
    vertx.close().await();
    node.close();
  }

  private static JsonObject body(String externalId) {
    JsonObject b = new JsonObject().put("type", "plain").put("owner", "acme").put("input", new JsonObject());
    return externalId == null ? b : b.put("externalId", externalId);
  }

  /** An externalId of acme's that binds a start to partition p. */
  private String externalIdIn(int p) {
    for (int i = 0; ; i++) {
      if (node.keys.partitionFor("acme", "order-" + i) == p) {
        return "order-" + i;
      }
    }
  }

  @Test
  void a_hundred_starts_without_an_external_id_all_land_in_the_partitions_that_are_ok() {
    Set<Integer> used = new HashSet<>();
    for (int i = 0; i < 100; i++) {
      TxSummary s = transactions.start(body(null)).await();
      int p = node.keys.partitionOf(s.txId());
      assertNotEquals(FAILING, p, s.txId() + " went to the failing partition");
      used.add(p);
    }
    assertEquals(Set.of(0, 2), used);
  }

  @Test
  void a_start_bound_to_the_failing_partition_answers_503_naming_it_after_partition_wait_and_writes_nothing() {
    String externalId = externalIdIn(FAILING);
    long before = System.nanoTime();
    Throwable e = transactions.start(body(externalId)).<Throwable>transform(ar -> Future.succeededFuture(ar.cause()))
        .await();
    long waitedMs = (System.nanoTime() - before) / 1_000_000;
    TxException refused = (TxException) e;
    assertEquals(TxException.Kind.PARTITION_UNAVAILABLE, refused.kind());
    assertEquals(503, refused.kind().status);
    assertTrue(refused.getMessage().startsWith("partition " + FAILING + " (its Redis master) is failing over: "),
        refused.getMessage());
    assertTrue(refused.getMessage().contains("Connection refused (test)"), refused.getMessage());
    assertTrue(waitedMs >= 300, "answered after " + waitedMs + " ms, before redis.partitionWait");
    assertEquals(0L, TestRedis.cmd("EXISTS", node.keys.externalId("acme", externalId)).toLong());
  }

  @Test
  void a_start_bound_to_a_failing_partition_goes_in_once_it_is_ok_within_partition_wait() {
    String externalId = externalIdIn(FAILING);
    vertx.setTimer(100, t -> health.succeeded(FAILING));
    TxSummary s = transactions.start(body(externalId)).await();
    assertEquals(FAILING, node.keys.partitionOf(s.txId()));
    assertEquals(externalId, s.externalId());
  }

  /**
   * The bulkhead itself, on the Redis Cluster pass only (one Redis cannot hold one partition and answer another):
   * the master of one partition holds every script for 5 s (CLIENT PAUSE WRITE, as a slow or failing-over master
   * would); starts placed there wait, while the starts placed in the others are answered, dequeued, run and completed
   * meanwhile. Placed by a tracker that knows nothing, so some starts do go to the held partition.
   */
  @Test
  void while_one_partitions_master_holds_every_script_the_others_start_run_and_complete() {
    assumeTrue(TestRedis.clusterMode(), "needs partitions on several masters");
    RedisClusterFixture cluster = TestRedis.cluster();
    // a partition off the global keys' master: the heartbeat and leases stay answered
    RedisClusterFixture.PartitionMaster off = cluster.partitionOffGlobal(node.keys);
    assumeTrue(off != null, "every partition shares the global keys' master");
    int held = off.partition();
    int port = off.port();
    health.succeeded(FAILING);
    long paused = System.nanoTime();
    cluster.cmd(port, "CLIENT", "PAUSE", "5000", "WRITE");
    try {
      List<Future<TxSummary>> starts = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        starts.add(transactions.start(body(null)));
      }
      int heldPartition = held;
      List<String> others = Eventually.until(Duration.ofSeconds(4), "the starts outside partition " + held
          + " to be answered and run", () -> {
            List<String> done = new ArrayList<>();
            for (Future<TxSummary> f : starts) {
              if (f.succeeded() && node.keys.partitionOf(f.result().txId()) != heldPartition) {
                TxSummary live = node.store.reads.getState(f.result().txId()).await();
                done.add(live != null && live.status().isFinal() ? f.result().txId() : null);
              }
            }
            return done;
          }, done -> done.size() >= 10 && !done.contains(null));
      long tookMs = (System.nanoTime() - paused) / 1_000_000;
      assertTrue(tookMs < 5000, "the other partitions waited for the held one: " + tookMs + " ms");
      assertTrue(starts.stream().anyMatch(f -> !f.isComplete()), "no start went to the held partition");
      assertTrue(others.size() >= 10, others.toString());
    } finally {
      cluster.cmd(port, "CLIENT", "UNPAUSE");
    }
  }
}
