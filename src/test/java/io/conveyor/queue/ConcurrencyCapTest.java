package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.pipeline.StepResult;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pipeline's maxConcurrency: with ten workers, only three of its transactions run at once; the rest are
 * held off any worker, and each run that ends (or is put back by a stopping node) lets the next one go.
 */
class ConcurrencyCapTest {
  private static final String CAPPED = "{'name':'capped','nodeGroup':'master','transactionType':true,"
      + "'maxConcurrency':3,'steps':[{'type':'test/hold'}]}";
  private final TestSteps steps = new TestSteps();
  private final List<TestNode> nodes = new ArrayList<>();

  @AfterEach
  void stop() {
    for (int i = nodes.size() - 1; i >= 0; i--) {
      nodes.get(i).close();
    }
  }

  private TestNode start(TestNode n) {
    nodes.add(n.start(steps.registry()));
    return n;
  }

  private static long running(TestNode node) {
    var v = cmd("HGET", node.keys.qRunH(0, "master"), "capped");
    return v == null ? 0 : v.toLong();
  }

  private static long held(TestNode node) {
    return cmd("ZCARD", node.keys.qHeldZ(0, "master", "capped")).toLong();
  }

  private void settles(TestNode node, int holding, int held) {
    Eventually.until(Duration.ofSeconds(10), holding + " running and " + held + " held",
        () -> steps.held.size() + "/" + running(node) + "/" + held(node),
        (holding + "/" + holding + "/" + held)::equals);
  }

  @Test
  void three_run_at_once_and_each_that_ends_lets_the_next_go() {
    // one partition (a hash-tag prefix on a Redis Cluster): the whole cap is this one queue's
    TestNode node = start(TestNode.withPrefix("{" + TestRedis.newPrefix().replace(":", "") + "}:")
        .set("REDIS_PARTITIONS", "1").set("NODE_WORKERS", "10").set("NODE_IDLE_WAIT", "200ms")
        .pipeline("capped", CAPPED));
    List<Future<io.conveyor.model.TxSummary>> started = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      started.add(node.transactions.start(new JsonObject().put("type", "capped").put("owner", "acme")
          .put("input", new JsonObject().put("i", i))));
    }
    Future.all(started).await();
    settles(node, 3, 5);
    int done = 0;
    while (done < 8) {
      steps.nextHeld().complete(StepResult.success(new JsonObject()));
      done++;
      int left = 8 - done;
      settles(node, Math.min(3, left), Math.max(0, left - 3));
    }
    for (Future<io.conveyor.model.TxSummary> f : started) {
      assertEquals(TxStatus.SUCCESS, node.awaitFinal(f.result().txId()).status());
    }
    assertEquals(0L, (long) cmd("EXISTS", node.keys.qRunH(0, "master")).toInteger(), "no slot left taken");
    assertEquals(0L, (long) cmd("SCARD", node.keys.qHeldS(0, "master")).toInteger());
  }

  @Test
  void a_stopping_node_puts_its_runs_back_and_frees_their_slots_for_the_next_node() {
    TestNode first = start(TestNode.withPrefix("{" + TestRedis.newPrefix().replace(":", "") + "}:")
        .set("REDIS_PARTITIONS", "1").set("NODE_WORKERS", "10").set("NODE_IDLE_WAIT", "200ms")
        .set("NODE_DRAIN_TIME", "100ms").pipeline("capped", CAPPED));
    for (int i = 0; i < 4; i++) {
      first.start("capped", new JsonObject().put("i", i));
    }
    settles(first, 3, 1);
    TestNode second = first.sibling();
    nodes.remove(first);
    first.stopKeepingData(); // its three runs are put back: their slots free
    steps.held.clear();
    assertTrue(running(first) == 0, "slots freed at the stop: " + running(first));
    start(second);
    settles(second, 3, 1);
    for (int i = 0; i < 4; i++) {
      steps.nextHeld().complete(StepResult.success(new JsonObject()));
    }
    settles(second, 0, 0);
  }
}
