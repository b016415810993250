package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.conveyor.domain.Transactions;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.PartitionHealth;
import io.conveyor.redis.RedisUnavailable;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.RedisClusterFixture;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The worker's takes are per partition (issue 36): on the Redis Cluster pass, a take that hangs in one partition
 * (its master holds every script: CLIENT PAUSE WRITE) does not hold the takes of the others. Skipped on one Redis.
 */
class PartitionTakesTest {
  private TestNode node;
  private io.vertx.core.Vertx vertx;

  @AfterEach
  void stop() {
    if (vertx != null) {
      vertx.close().await();
    }
    if (node != null) {
      node.close();
    }
  }

  /** RESP for one command. */
  private static String resp(String... args) {
    StringBuilder b = new StringBuilder("*" + args.length + "\r\n");
    for (String a : args) {
      b.append('$').append(a.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(a).append("\r\n");
    }
    return b.toString();
  }

  @Test
  void a_take_held_in_one_partition_does_not_hold_the_takes_and_runs_of_the_others() throws IOException {
    assumeTrue(TestRedis.clusterMode(), "needs partitions on several masters");
    node = new TestNode().set("REDIS_PARTITIONS", "3").set("NODE_ROLES", "dequeue")
        .pipeline("plain", "{'name':'plain','nodeGroup':'master','transactionType':true,"
            + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .start(new TestSteps().registry());
    RedisClusterFixture cluster = TestRedis.cluster();
    // a partition off the global keys' master: the heartbeat and leases stay answered
    RedisClusterFixture.PartitionMaster off = cluster.partitionOffGlobal(node.keys);
    assumeTrue(off != null, "every partition shares the global keys' master");
    int held = off.partition();
    int port = off.port();
    // the test's starts avoid the held partition: only the node's take goes there
    PartitionHealth placing = PartitionHealth.untracked(3);
    placing.failed(held, new RedisUnavailable(new IllegalStateException("held by the test")));
    vertx = io.vertx.core.Vertx.vertx();
    Transactions starts = new Transactions(node.node().redis().open(vertx).withHealth(placing),
        node.node().catalog(), node.config(), Future.succeededFuture(null), new NodeMetrics(false));
    long paused = System.nanoTime();
    // one write, read by Redis at once: the ring reaches the node, whose take there comes after the pause
    try (Socket s = new Socket("127.0.0.1", port)) {
      OutputStream out = s.getOutputStream();
      out.write((resp("SPUBLISH", node.keys.qRingL(held, "master"), "1") + resp("CLIENT", "PAUSE", "5000", "WRITE"))
          .getBytes(StandardCharsets.UTF_8));
      out.flush();
      s.getInputStream().read(new byte[64]);
    }
    try {
      List<Future<TxSummary>> started = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        started.add(starts.start(new JsonObject().put("type", "plain").put("owner", "acme")
            .put("input", new JsonObject())));
      }
      Eventually.until(Duration.ofSeconds(4), "the starts outside the held partition to run to their end", () -> {
        List<String> states = new ArrayList<>();
        for (Future<TxSummary> f : started) {
          TxSummary live = f.succeeded() ? node.store.reads.getState(f.result().txId()).await() : null;
          states.add(live != null ? live.status() + "/" + live.processingState()
              : f.failed() ? "failed: " + f.cause().getMessage() : "unanswered");
        }
        return states;
      }, states -> states.stream().allMatch(st -> st.startsWith("success")));
      long tookMs = (System.nanoTime() - paused) / 1_000_000;
      assertTrue(tookMs < 5000, "the other partitions' takes waited for the held one: " + tookMs + " ms");
    } finally {
      cluster.cmd(port, "CLIENT", "UNPAUSE");
    }
  }
}
