package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.pipeline.StepResult;
import io.conveyor.redis.ControlStore.GroupState;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Pause, drain and resume a node group on a real node: the state is in Redis, and dequeue.lua honours it. */
class GroupPauseTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  @BeforeEach
  void startNode() {
    node = new TestNode().set("NODE_WORKERS", "2")
        .pipeline("hold", "{'name':'hold','nodeGroup':'master','transactionType':true,'steps':[{'type':'test/hold'}]}")
        .pipeline("quick", "{'name':'quick','nodeGroup':'master','transactionType':true,'steps':[{'type':'test/record'}]}")
        .start(steps.registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private GroupState group(String action) {
    return node.transactions.group("master", action, "ops").await();
  }

  private String state(String txId) {
    return cmd("HGET", node.keys.stateH(txId), "processingState").toString();
  }

  /** Waits until every partition's dequeue has run since the pause (it drops the ring's token each time). */
  private void awaitIdleRings() {
    Eventually.until(Duration.ofSeconds(10), "the paused group's nodes to find nothing to take",
        () -> node.total("LLEN", p -> node.keys.qRingL(p, "master")), n -> n == 0);
  }

  @Test
  void a_paused_group_takes_nothing_keeps_its_queue_and_resumes_with_nothing_lost() {
    GroupState paused = group("pause");
    assertEquals("paused", paused.state());
    assertEquals("ops", paused.by());
    List<String> queued = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      queued.add(node.start("quick", new JsonObject().put("i", i)));
    }
    awaitIdleRings();
    for (int p : node.keys.all()) {
      assertEquals(List.of(), node.store.queue.dequeue(p, "master", "probe", 100).await(), "the script takes nothing");
    }
    assertTrue(queued.stream().allMatch(id -> state(id).equals("queued")), "nothing was taken while paused");
    assertEquals(0, steps.recorded.size());
    GroupState read = group("read");
    assertEquals("paused", read.state());
    assertEquals(20, read.queued(), "queued work stays queued and counted");

    assertEquals("running", group("resume").state());
    for (String id : queued) {
      assertEquals(TxStatus.SUCCESS, node.awaitFinal(id).status());
    }
    assertEquals(20, steps.recorded.size());
  }

  @Test
  void drain_stops_taking_work_and_reports_drained_when_in_flight_work_ends() {
    String a = node.start("hold", new JsonObject());
    String b = node.start("hold", new JsonObject());
    Promise<StepResult> first = steps.nextHeld();
    Promise<StepResult> second = steps.nextHeld();
    GroupState draining = group("drain");
    assertEquals("draining", draining.state());
    assertEquals(2, draining.inFlight());
    assertFalse(draining.toJson().getBoolean("drained"));
    String later = node.start("quick", new JsonObject());
    first.complete(StepResult.success(new JsonObject()));
    second.complete(StepResult.success(new JsonObject()));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(a).status());
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(b).status());
    GroupState drained = group("read");
    assertEquals(0, drained.inFlight());
    assertTrue(drained.toJson().getBoolean("drained"));
    awaitIdleRings();
    assertEquals("queued", state(later), "work started while draining waits");
    group("resume");
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(later).status());
  }

  @Test
  void a_pause_outlives_a_node_restart() {
    group("pause");
    node.stopKeepingData();
    TestNode again = node.sibling();
    try {
      again.start(steps.registry());
      String id = again.start("quick", new JsonObject());
      Eventually.until(Duration.ofSeconds(10), "the restarted node to find nothing to take",
          () -> again.total("LLEN", p -> again.keys.qRingL(p, "master")), n -> n == 0);
      assertEquals("queued", cmd("HGET", again.keys.stateH(id), "processingState").toString());
      again.transactions.group("master", "resume", "ops").await();
      assertEquals(TxStatus.SUCCESS, again.awaitFinal(id).status());
    } finally {
      again.close();
    }
  }
}
