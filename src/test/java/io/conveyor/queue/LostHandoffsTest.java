package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.domain.Transactions;
import io.conveyor.model.Dequeued;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.Handoff;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.RedisUser;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A start whose reply was lost after it handed work to the node's workers holds the node's takes partition by
 * partition until what it may have handed over there is put back (LostHandoffs). Where the put-back fails (here the
 * node may not touch one partition's keys, a Redis ACL of the test's, as when that partition's master fails over),
 * only that partition is held: the others are put back and take on. Once its put-back goes through (tried again
 * each second), the held partition's hand-off is put back and taken again, and runs.
 */
class LostHandoffsTest {
  private static final int PARTS = 3;
  private final Vertx client = Vertx.vertx();
  private RedisUser user;
  private TestNode node;

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
    if (user != null) {
      user.close();
    }
    client.close().await();
  }

  @Test
  void a_partition_whose_put_back_fails_holds_only_its_own_takes_and_runs_its_hand_off_once_put_back()
      throws Exception {
    user = RedisUser.create();
    // partitions need a prefix without a hash tag of its own
    node = user.on(TestNode.withPrefix(TestRedis.newPrefix().replaceAll("[{}]", "")))
        .set("REDIS_PARTITIONS", Integer.toString(PARTS)).set("NODE_IDLE_WAIT", "60s")
        .pipeline("plain", "{'name':'plain','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .start(new TestSteps().registry());
    Handoff real = awaitIdle();

    // a start hands its transaction to the node's workers; its reply is then taken as lost (below)
    CompletableFuture<Integer> handed = new CompletableFuture<>();
    String txId = offering(new LostReply(real, handed)).start(body(null)).await().txId();
    int reserved = handed.get(10, TimeUnit.SECONDS);
    int p = node.keys.partitionOf(txId);
    assertEquals("processing", state(txId, "processingState"));
    assertEquals("1", state(txId, "attempt"));

    // the node may no longer touch partition p's keys: its put-back there fails, each try
    List<String> allowed = new ArrayList<>(List.of("resetkeys", "~" + node.keys.nodesZ().replace("nodesZ", "*")));
    for (int q = 0; q < PARTS; q++) {
      if (q != p) {
        allowed.add("~" + node.keys.processingZ(q).replace("processingZ", "*"));
      }
    }
    user.set(allowed.toArray(String[]::new));
    real.lost(reserved);

    // the other partitions are put back and take on: starts there run to their end while p is held
    List<String> others = new ArrayList<>();
    for (int i = 0; others.size() < 2 * (PARTS - 1); i++) {
      String externalId = "other-" + i;
      if (node.keys.partitionFor("acme", externalId) != p) {
        others.add(node.transactions.start(body(externalId)).await().txId());
      }
    }
    Eventually.until(Duration.ofSeconds(10), "the starts outside partition " + p + " to end", () -> {
      List<String> states = new ArrayList<>();
      for (String other : others) {
        TxSummary s = node.store.reads.getState(other).await();
        states.add(s == null ? "gone" : s.status().wire() + "/" + s.processingState());
      }
      return states;
    }, states -> states.stream().allMatch("success/complete"::equals));
    // p's hand-off was not put back: its put-back was refused (ACL LOG names the key), and no take went there
    String inflight = node.keys.inflightZ(p, node.node().nodeId());
    Eventually.until(Duration.ofSeconds(5), "Redis to refuse the node " + inflight, () -> user.refused(inflight),
        refused -> refused);
    assertEquals("processing", state(txId, "processingState"));
    assertEquals("1", state(txId, "attempt"));

    // p answers the node again: its put-back (attempt 2) goes at its next try, and a take runs it (attempt 3)
    user.set("~*");
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId, Duration.ofSeconds(10)).status());
    assertEquals("3", state(txId, "attempt"));
  }

  /** A field of the transaction's stateH, as Redis holds it. */
  private String state(String txId, String field) {
    return String.valueOf(cmd("HGET", node.keys.stateH(txId), field));
  }

  /** Waits until the node's workers wait for work (only then are they offered a start's transaction). */
  private Handoff awaitIdle() {
    Eventually.until(Duration.ofSeconds(10), "the node's workers to wait for work", () -> {
      Handoff h = node.node().handoff();
      int got = h.reserve(1).await();
      if (got > 0) {
        h.handed(got, List.of()); // give the slot back
      }
      return got;
    }, n -> n == 1);
    return node.node().handoff();
  }

  /** A Transactions on the node's Redis whose starts may hand work to the node's workers, as its API's do. */
  private Transactions offering(Handoff handoff) {
    return new Transactions(node.node().redis().open(client), node.node().catalog(),
        node.config(), Future.succeededFuture(node.node().archive()), new io.conveyor.metrics.NodeMetrics(false),
        io.conveyor.trace.Tracing.OFF, () -> handoff);
  }

  private static JsonObject body(String externalId) {
    JsonObject b = new JsonObject().put("type", "plain").put("owner", "acme").put("input", new JsonObject());
    return externalId == null ? b : b.put("externalId", externalId);
  }

  /** The start's call lands and hands its transaction over, but its reply is kept back: the test says it was lost. */
  private record LostReply(Handoff real, CompletableFuture<Integer> handed) implements Handoff {
    @Override
    public String nodeId() {
      return real.nodeId();
    }

    @Override
    public String group() {
      return real.group();
    }

    @Override
    public Future<Integer> reserve(int n) {
      return real.reserve(n);
    }

    @Override
    public void handed(int reserved, List<Dequeued> txs) {
      if (txs.size() != 1) {
        real.handed(reserved, txs);
        handed.completeExceptionally(new AssertionError("the start was not handed to the node: " + txs));
      } else {
        handed.complete(reserved);
      }
    }

    @Override
    public void lost(int reserved) {
      real.lost(reserved);
    }
  }
}
