package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.conveyor.domain.Pauses;
import io.conveyor.model.TxStatus;
import io.conveyor.pipeline.StepResult;
import io.conveyor.redis.EventStore;
import io.conveyor.redis.PauseStore;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Pause and resume over a tree (issue 34): the branches of a parallel step follow their root as children do, a
 * pause with tree false leaves what the root waits for running, and each pause and resume is logged as an event.
 */
class PauseTreeTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  @BeforeEach
  void startNode() {
    node = new TestNode().set("REAPER_INTERVAL", "20ms").set("NODE_IDLE_WAIT", "200ms")
        .pipeline("fan", "{'name':'fan','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/parallel','params':{'branches':[{'pipeline':'leg'},{'pipeline':'leg'}]}},"
            + "{'type':'test/record'}]}")
        .pipeline("parent", "{'name':'parent','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'leg'}},{'type':'test/record'}]}")
        .pipeline("leg", "{'name':'leg','nodeGroup':'master','steps':[{'type':'test/hold'},{'type':'test/record'}]}")
        .start(steps.registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private Pauses pauses() {
    return new Pauses(new PauseStore(node.transactions.context()), node.transactions);
  }

  private void pause(String txId, boolean tree) {
    pauses().pause(txId, "acme", "ops", Pauses.pauseAsk(new JsonObject().put("reason", "hold it").put("tree", tree)))
        .await();
  }

  private void resume(String txId, boolean tree) {
    pauses().resume(txId, "acme", "ops", Pauses.resumeAsk(new JsonObject().put("tree", tree))).await();
  }

  private String field(String txId, String name) {
    return node.stateField(txId, name);
  }

  private void until(String txId, String name, String value) {
    node.awaitField(txId, name, value);
  }

  private List<String> logged(String kind, String txId) {
    List<String> out = new ArrayList<>();
    new EventStore(node.transactions.context()).read(new EventStore.Filter(kind, null, txId, null, null, 10)).await()
        .forEach(e -> out.add(((JsonObject) e).getJsonObject("details").getString("by") + " "
            + ((JsonObject) e).getJsonObject("details").getValue("tree")));
    return out;
  }

  @Test
  void the_branches_of_a_parallel_step_follow_their_root_and_each_act_is_logged() {
    String root = node.start("fan", new JsonObject());
    Promise<StepResult> first = steps.nextHeld();
    Promise<StepResult> second = steps.nextHeld();
    JsonArray branches = new JsonObject(field(root, "fork")).getJsonArray("ids");
    assertEquals(2, branches.size(), "two branches: " + branches);
    pause(root, true);
    for (Object b : branches) {
      assertNotNull(field((String) b, "paused"), "branch " + b + " is paused with its root");
    }
    first.complete(StepResult.success(new JsonObject()));
    second.complete(StepResult.success(new JsonObject()));
    for (Object b : branches) {
      until((String) b, "pausedQueue", "in");
    }
    assertEquals(0, steps.recorded.size(), "no branch's next step started while paused");
    assertEquals(List.of("ops true"), logged("tx-paused", root), "one tx-paused event, for the root");
    resume(root, true);
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(root).status());
    assertEquals(3, steps.recorded.size(), "each branch's last step, then the root's");
    assertEquals(List.of("ops true"), logged("tx-resumed", root), "one tx-resumed event, for the root");
  }

  @Test
  void a_pause_without_its_tree_leaves_the_child_running_and_holds_the_root_when_the_child_ends() {
    String parent = node.start("parent", new JsonObject());
    Promise<StepResult> childStep = steps.nextHeld();
    String child = field(parent, "waitingFor");
    pause(parent, false);
    assertNull(field(child, "paused"), "the child is not paused");
    assertNotNull(field(parent, "paused"));
    childStep.complete(StepResult.success(new JsonObject()));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(child).status(), "the child runs to its end");
    Eventually.until(Duration.ofSeconds(10), parent + " parked", () -> String.valueOf(field(parent, "pausedQueue")),
        q -> !"null".equals(q)); // parked off the queue the child's end put it on
    assertEquals(1, steps.recorded.size(), "the child's last step ran; the parent's next one did not");
    assertEquals(List.of("ops false"), logged("tx-paused", parent));
    resume(parent, false);
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(parent).status());
    assertEquals(2, steps.recorded.size(), "then the parent's last step");
  }
}
