package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.StepResult;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * flow/parallel on two real nodes: the parent's group (master) and the branches' group (b, served by a second
 * node). Branches are child transactions; the join is decided by the branch that ends it, in complete.lua.
 */
class ParallelTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;
  private TestNode branches;

  private static String fan(String name, String params) {
    return "{'name':'" + name + "','nodeGroup':'master','transactionType':true,'steps':["
        + "{'type':'flow/parallel','params':" + params + "},{'type':'test/record'}]}";
  }

  @BeforeEach
  void startNodes() {
    node = new TestNode().set("REAPER_INTERVAL", "20ms")
        .pipeline("slow", "{'name':'slow','nodeGroup':'b','steps':[{'type':'util/delay','params':{'duration':'1s'}}]}")
        .pipeline("quick", "{'name':'quick','nodeGroup':'b','steps':[{'type':'util/fixed-reply',"
            + "'params':{'reply':{'quick':true}}}]}")
        .pipeline("hold", "{'name':'hold','nodeGroup':'b','steps':[{'type':'test/hold'}]}")
        .pipeline("watch", "{'name':'watch','nodeGroup':'b','steps':[{'type':'test/watch-cancel','timeout':'20s'}]}")
        .pipeline("fail", "{'name':'fail','nodeGroup':'b','steps':[{'type':'util/fail','params':{'note':'no stock'}}]}")
        .pipeline("three-slow", fan("three-slow", "{'branches':[{'pipeline':'slow','input':{'n':1}},"
            + "{'pipeline':'slow','input':{'n':2}},{'pipeline':'slow','input':{'n':3}}]}"))
        .pipeline("any", fan("any", "{'join':'any','branches':[{'pipeline':'watch'},{'pipeline':'quick'},"
            + "{'pipeline':'watch'}]}"))
        .pipeline("one-fails", fan("one-fails", "{'branches':[{'pipeline':'watch'},{'pipeline':'fail'},"
            + "{'pipeline':'watch'}]}"))
        .pipeline("tolerant", fan("tolerant", "{'continueOnFailure':true,'branches':[{'pipeline':'fail'},"
            + "{'pipeline':'quick'},{'pipeline':'quick'}]}"))
        .pipeline("two-of-three", fan("two-of-three", "{'atLeast':2,'continueOnFailure':true,'branches':["
            + "{'pipeline':'fail'},{'pipeline':'fail'},{'pipeline':'quick'}]}"))
        .pipeline("each", fan("each", "{'forEach':'items','pipeline':'hold','maxConcurrency':2}"))
        .pipeline("two-running", fan("two-running", "{'branches':[{'pipeline':'watch'},{'pipeline':'watch'}]}"));
    branches = node.sibling().set("NODE_GROUP", "b");
    node.start(steps.registry());
    branches.start(steps.registry());
  }

  @AfterEach
  void stopNodes() {
    branches.close();
    node.close();
  }

  private String field(String txId, String name) {
    Response r = cmd("HGET", node.keys.stateH(txId), name);
    return r == null ? null : r.toString();
  }

  private List<String> branchIds(String parent) {
    Eventually.until(Duration.ofSeconds(10), "the branches to start", () -> field(parent, "fork"), f -> f != null);
    return new JsonObject(field(parent, "fork")).getJsonArray("ids").stream().map(Object::toString).toList();
  }

  /** The parent's recorded step (after the parallel step) and its input: the join's output. */
  private JsonObject joined(String parent) {
    List<JsonObject> runs = steps.recorded.stream().filter(r -> r.getString("txId").equals(parent)).toList();
    assertEquals(1, runs.size(), "the parent resumed once: " + runs);
    return runs.get(0).getJsonObject("input");
  }

  @Test
  void three_one_second_branches_run_side_by_side_and_their_outputs_come_back_in_order() {
    long began = System.nanoTime();
    String parent = node.start("three-slow", new JsonObject());
    TxSummary s = node.awaitFinal(parent);
    long ms = (System.nanoTime() - began) / 1_000_000;
    assertEquals(TxStatus.SUCCESS, s.status(), s.note());
    JsonObject out = joined(parent);
    assertEquals(new JsonArray().add(new JsonObject().put("n", 1)).add(new JsonObject().put("n", 2))
        .add(new JsonObject().put("n", 3)), out.getJsonArray("outputs"));
    assertEquals(new JsonArray().add("success").add("success").add("success"), out.getJsonArray("statuses"));
    org.slf4j.LoggerFactory.getLogger(ParallelTest.class).info("three 1 s branches ended in {} ms", ms);
    for (String b : branchIds(parent)) {
      assertEquals(parent, field(b, "parentTxId"));
      assertEquals("b", field(b, "group"), "a branch runs in its pipeline's group");
    }
  }

  @Test
  void an_any_join_goes_on_after_the_first_branch_and_cancels_the_others() {
    String parent = node.start("any", new JsonObject().put("x", 1));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(parent).status());
    JsonObject out = joined(parent);
    assertEquals(new JsonObject().put("quick", true), out.getJsonArray("outputs").getJsonObject(1));
    assertEquals(new JsonArray().add("cancelled").add("success").add("cancelled"), out.getJsonArray("statuses"));
    List<String> ids = branchIds(parent);
    assertEquals(TxStatus.CANCELLED, node.awaitFinal(ids.get(0)).status());
    assertEquals(TxStatus.CANCELLED, node.awaitFinal(ids.get(2)).status());
    assertEquals(2, steps.sawCancel.size(), "both running branches saw the cancel: " + steps.sawCancel);
  }

  @Test
  void a_failing_branch_fails_the_step_and_cancels_the_running_ones() {
    String parent = node.start("one-fails", new JsonObject());
    TxSummary s = node.awaitFinal(parent);
    long failedAt = System.nanoTime();
    assertEquals(TxStatus.FAILED, s.status());
    assertTrue(s.note().startsWith("branch 2 ("), s.note());
    assertTrue(s.note().endsWith("ended failed: no stock"), s.note());
    List<String> ids = branchIds(parent);
    for (int i : new int[] {0, 2}) {
      assertEquals(TxStatus.CANCELLED, node.awaitFinal(ids.get(i)).status());
    }
    org.slf4j.LoggerFactory.getLogger(ParallelTest.class).info("the other two branches ended {} ms after the parent",
        (System.nanoTime() - failedAt) / 1_000_000);
    assertEquals(0, steps.recorded.size(), "the parent's next step never ran");
  }

  @Test
  void with_continue_on_failure_an_all_join_waits_for_every_branch_and_succeeds() {
    String parent = node.start("tolerant", new JsonObject());
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(parent).status());
    JsonObject out = joined(parent);
    assertEquals(new JsonArray().add("failed").add("success").add("success"), out.getJsonArray("statuses"));
    assertEquals(null, out.getJsonArray("outputs").getValue(0));
  }

  @Test
  void at_least_n_fails_once_it_is_out_of_reach() {
    String parent = node.start("two-of-three", new JsonObject());
    TxSummary s = node.awaitFinal(parent);
    assertEquals(TxStatus.FAILED, s.status());
    assertEquals("2 of 3 branches did not succeed; 2 had to", s.note());
  }

  @Test
  void for_each_runs_at_most_max_concurrency_branches_at_once() {
    JsonArray items = new JsonArray();
    for (int i = 0; i < 5; i++) {
      items.add(i);
    }
    String parent = node.start("each", new JsonObject().put("items", items));
    List<String> ids = branchIds(parent);
    assertEquals(5, ids.size());
    List<Promise<StepResult>> running = new ArrayList<>(List.of(steps.nextHeld(), steps.nextHeld()));
    Map<String, Long> states = ids.stream().collect(Collectors.groupingBy(id -> field(id, "processingState"),
        Collectors.counting()));
    assertEquals(3L, states.get("pending"), "three wait for a free slot: " + states);
    for (int done = 0; done < 5; done++) {
      running.remove(0).complete(StepResult.success(new JsonObject().put("done", done)));
      if (done < 3) {
        running.add(steps.nextHeld());
      }
      long pending = ids.stream().filter(id -> "pending".equals(field(id, "processingState"))).count();
      assertTrue(pending <= Math.max(0, 2 - done), "released one at a time: " + pending + " after " + (done + 1));
    }
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(parent).status());
    JsonArray inputs = new JsonArray();
    for (String id : ids) {
      inputs.add(new JsonObject(field(id, "input")).getValue("item"));
    }
    assertEquals(items, inputs, "each element is its branch's input, in order");
  }

  @Test
  void cancelling_the_parent_cancels_every_branch_running_or_pending() {
    String parent = node.start("each", new JsonObject().put("items", new JsonArray().add(1).add(2).add(3)));
    List<String> ids = branchIds(parent);
    Promise<StepResult> first = steps.nextHeld();
    Promise<StepResult> second = steps.nextHeld();
    assertEquals(TxStatus.CANCELLED, node.transactions.cancel(parent, "acme").await().status());
    assertEquals("cancelled", field(ids.get(2), "status"), "the pending branch ends at once");
    assertEquals("1", field(ids.get(0), "cancelRequested"));
    assertEquals("1", field(ids.get(1), "cancelRequested"));
    first.complete(StepResult.success(new JsonObject()));
    second.complete(StepResult.success(new JsonObject()));
    assertEquals(TxStatus.CANCELLED, node.awaitFinal(ids.get(0)).status());
    assertEquals(TxStatus.CANCELLED, node.awaitFinal(ids.get(1)).status());
  }

  @Test
  void two_hundred_parents_of_three_branches_each_resume_exactly_once() {
    List<String> parents = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      parents.add(node.start("tolerant", new JsonObject().put("i", i)));
    }
    for (String p : parents) {
      assertEquals(TxStatus.SUCCESS, node.awaitFinal(p).status());
    }
    Map<String, Long> resumed = steps.recorded.stream().collect(Collectors.groupingBy(r -> r.getString("txId"),
        Collectors.counting()));
    assertEquals(200, resumed.size());
    assertTrue(resumed.values().stream().allMatch(n -> n == 1), "a parent resumed twice: " + resumed);
    for (String p : parents) {
      assertEquals("2", field(p, "attempt"), "dequeued once to fork, once to resume");
    }
  }

  @Test
  void cancelling_a_parent_with_two_running_children_ends_all_three() {
    String parent = node.start("two-running", new JsonObject());
    List<String> ids = branchIds(parent);
    for (String id : ids) {
      Eventually.until(Duration.ofSeconds(10), id + " to run", () -> field(id, "processingState"),
          "processing"::equals);
    }
    long began = System.nanoTime();
    assertEquals(TxStatus.CANCELLED, node.transactions.cancel(parent, "acme").await().status());
    for (String id : ids) {
      assertEquals(TxStatus.CANCELLED, node.awaitFinal(id).status());
    }
    org.slf4j.LoggerFactory.getLogger(ParallelTest.class).info("a parent and its two running children ended {} ms "
        + "after the cancel", (System.nanoTime() - began) / 1_000_000);
    assertEquals(2, steps.sawCancel.size(), "both running children saw the cancel");
  }
}
