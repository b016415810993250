package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Trees of children and branches meet limits.maxDepth and limits.maxDescendants before they run away. */
class RunawayTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  @AfterEach
  void stopNode() {
    if (node != null) {
      node.close();
    }
  }

  private long ended(String type) {
    return node.node().archive().ended(type, "failed", 0, Long.MAX_VALUE / 4, 1000).await().size();
  }

  @Test
  void a_cycle_of_child_pipelines_ends_failed_with_depth_exceeded_and_leaves_nothing_in_redis() {
    node = new TestNode().set("ARCHIVE_DELAY", "0s").set("ARCHIVE_INTERVAL", "50ms")
        .pipeline("a", "{'name':'a','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'b'}}]}")
        .pipeline("b", "{'name':'b','nodeGroup':'master','steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'a'}}]}")
        .start(steps.registry());
    String root = node.start("a", new JsonObject());
    TxSummary s = Eventually.until(Duration.ofSeconds(30), "the root to end", () -> node.awaitFinal(root),
        x -> x.status().isFinal());
    assertEquals(TxStatus.FAILED, s.status());
    assertTrue(s.note().contains("depth-exceeded") && s.note().contains("limits.maxDepth 32"), s.note());
    // the root and its 32 nested children (depths 1 to 32): the 33rd was refused before it existed
    long all = Eventually.until(Duration.ofSeconds(30), "every transaction of the chain archived",
        () -> ended("a") + ended("b"), n -> n >= 33);
    assertEquals(33, all, "transactions that ever existed");
    assertTrue(all < 2 * 32);
    Eventually.until(Duration.ofSeconds(30), "Redis to hold none of them",
        () -> TestRedis.keys(node.prefix).stream().filter(k -> k.contains("stateH:") || k.contains("cancelL"))
            .toList(), List::isEmpty);
    assertEquals(0, node.total("ZCARD", node.keys::liveZ), "the search index holds none of them");
  }

  @Test
  void a_chain_deeper_than_max_depth_fails_the_step_that_would_nest_too_deep() {
    node = new TestNode().set("LIMITS_MAX_DEPTH", "2")
        .pipeline("top", "{'name':'top','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'middle'}}]}")
        .pipeline("middle", "{'name':'middle','nodeGroup':'master','steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'bottom'}}]}")
        .pipeline("bottom", "{'name':'bottom','nodeGroup':'master','steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'leaf'}}]}")
        .pipeline("leaf", "{'name':'leaf','nodeGroup':'master','steps':[{'type':'util/fixed-reply',"
            + "'params':{'reply':{}}}]}")
        .start(steps.registry());
    String root = node.start("top", new JsonObject());
    TxSummary s = node.awaitFinal(root);
    assertEquals(TxStatus.FAILED, s.status());
    assertTrue(s.note().contains("depth-exceeded: a child would nest at depth 3 below its root, over "
        + "limits.maxDepth 2"), s.note());
    assertEquals("2", cmd("HGET", node.keys.stateH(root), "descendants").toString(), "middle and bottom only");
    assertEquals(3, node.total("ZCARD", node.keys::liveZ), "no leaf was created");
  }

  @Test
  void a_fork_that_would_pass_max_descendants_fails_before_any_branch_exists() {
    node = new TestNode().set("LIMITS_MAX_DESCENDANTS", "5")
        .pipeline("fan", "{'name':'fan','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/parallel','params':{'forEach':'items','pipeline':'leaf'}}]}")
        .pipeline("leaf", "{'name':'leaf','nodeGroup':'master','steps':[{'type':'util/fixed-reply',"
            + "'params':{'reply':{}}}]}")
        .start(steps.registry());
    String fits = node.start("fan", new JsonObject().put("items", new JsonArray(List.of(1, 2, 3, 4, 5))));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(fits).status());
    String over = node.start("fan", new JsonObject().put("items", new JsonArray(List.of(1, 2, 3, 4, 5, 6))));
    TxSummary s = node.awaitFinal(over);
    assertEquals(TxStatus.FAILED, s.status());
    assertTrue(s.note().contains("descendants-exceeded: its root's tree would hold 6 transactions, over "
        + "limits.maxDescendants 5"), s.note());
    assertEquals(1 + 5 + 1, node.total("ZCARD", node.keys::liveZ), "no branch of the second was created");
    assertEquals("5", cmd("HGET", node.keys.stateH(fits), "descendants").toString());
  }

  @Test
  void a_branch_knows_its_root_and_depth() {
    node = new TestNode()
        .pipeline("fan", "{'name':'fan','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/parallel','params':{'forEach':'items','pipeline':'one'}}]}")
        .pipeline("one", "{'name':'one','nodeGroup':'master','steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'leaf'}}]}")
        .pipeline("leaf", "{'name':'leaf','nodeGroup':'master','steps':[{'type':'test/hold'}]}")
        .start(steps.registry());
    String root = node.start("fan", new JsonObject().put("items", new JsonArray(List.of(1))));
    io.vertx.core.Promise<io.conveyor.pipeline.StepResult> held = steps.nextHeld();
    String branch = new JsonObject(cmd("HGET", node.keys.stateH(root), "fork").toString()).getJsonArray("ids")
        .getString(0);
    String leaf = Eventually.until(Duration.ofSeconds(10), "the branch to wait for its child",
        () -> cmd("HGET", node.keys.stateH(branch), "waitingFor"), r -> r != null).toString();
    assertEquals(List.of(root, "1"), fields(branch));
    assertEquals(List.of(root, "2"), fields(leaf));
    assertEquals("2", cmd("HGET", node.keys.stateH(root), "descendants").toString());
    held.complete(io.conveyor.pipeline.StepResult.success(new JsonObject()));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(root).status());
  }

  private List<String> fields(String txId) {
    return List.of(cmd("HGET", node.keys.stateH(txId), "root").toString(),
        cmd("HGET", node.keys.stateH(txId), "depth").toString());
  }
}
