package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.conveyor.model.TxStatus;
import io.conveyor.pipeline.StepResult;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A node runs no more transactions than its worker slots, and takes more as slots free up. */
class WorkerSlotsTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  @AfterEach
  void stopNode() {
    if (node != null) { // none when the test was skipped
      node.close();
    }
  }

  @Test
  void a_node_with_two_slots_runs_two_and_leaves_the_rest_queued_until_a_slot_frees() throws Exception {
    node = new TestNode().set("NODE_WORKERS", "2")
        .pipeline("hold", "{'name':'hold','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/hold'}]}")
        .start(steps.registry());
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ids.add(node.start("hold", new JsonObject().put("i", i)));
    }
    Eventually.until(Duration.ofSeconds(5), "two held steps", steps.held::size, n -> n == 2);
    assertEquals(2, node.total("ZCARD", node.keys::processingZ));
    assertEquals(3, queued());

    steps.held.take().complete(StepResult.success(new JsonObject()));
    Eventually.until(Duration.ofSeconds(5), "a third transaction taken",
        this::queued, n -> n == 2);
    assertEquals(2, node.total("ZCARD", node.keys::processingZ));

    for (int released = 1; released < 5; released++) {
      steps.held.poll(5, java.util.concurrent.TimeUnit.SECONDS).complete(StepResult.success(new JsonObject()));
    }
    for (String id : ids) {
      assertEquals(TxStatus.SUCCESS, node.awaitFinal(id).status());
    }
    assertEquals(0, node.total("ZCARD", node.keys::processingZ));
  }

  /** Transactions waiting on group master's in-queues, over every partition. */
  private long queued() {
    return node.total("ZCARD", p -> node.keys.qInZ(p, "master"));
  }

  @Test
  void an_idle_node_picks_up_a_new_transaction_without_waiting_for_its_idle_timeout() {
    // it sees the node block on its ring in the one server's CLIENT LIST; on a cluster that shows one master's
    // connections, and with several partitions the ring is a subscription, not a BLPOP
    assumeFalse(TestRedis.clusterMode(), "CLIENT LIST shows one server's connections");
    // idleWait of a minute: only the ring can wake the node in time
    node = new TestNode().set("NODE_IDLE_WAIT", "60s")
        .pipeline("one", "{'name':'one','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .start(steps.registry());
    Eventually.until(Duration.ofSeconds(5), "the node to block on its ring",
        () -> cmd("CLIENT", "LIST").toString().lines()
            .anyMatch(l -> l.contains("name=conveyor-ring:" + node.node().nodeId()) && l.contains("cmd=blpop")),
        b -> b);
    String txId = node.start("one", new JsonObject());
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
  }
}
