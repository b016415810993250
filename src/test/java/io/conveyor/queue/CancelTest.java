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
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Cancel on a real node reaches every state: the last step running, a sleep or hop asked for, children, parents. */
class CancelTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  @BeforeEach
  void startNode() {
    node = new TestNode().set("REAPER_INTERVAL", "20ms")
        .pipeline("one", "{'name':'one','nodeGroup':'master','transactionType':true,'steps':[{'type':'test/hold'}]}")
        .pipeline("two", "{'name':'two','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/hold'},{'type':'test/record'}]}")
        .pipeline("watch", "{'name':'watch','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/watch-cancel','timeout':'10s'}]}")
        .pipeline("parent", "{'name':'parent','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'child'}},{'type':'test/record'}]}")
        .pipeline("child", "{'name':'child','nodeGroup':'master','steps':[{'type':'test/hold'}]}")
        .pipeline("sleepy-parent", "{'name':'sleepy-parent','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'sleeper'}},{'type':'test/record'}]}")
        .pipeline("sleeper", "{'name':'sleeper','nodeGroup':'master','steps':["
            + "{'type':'util/delay','params':{'duration':'2h'}}]}")
        .pipeline("grandparent", "{'name':'grandparent','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'parent'}},{'type':'test/record'}]}")
        .pipeline("failing-parent", "{'name':'failing-parent','nodeGroup':'master','transactionType':true,"
            + "'steps':[{'type':'util/child-pipeline','params':{'pipeline':'failing'}},{'type':'test/record'}]}")
        .pipeline("failing", "{'name':'failing','nodeGroup':'master','steps':[{'type':'util/fail',"
            + "'params':{'note':'out of stock'}}]}")
        .start(steps.registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private Promise<StepResult> held() {
    return steps.nextHeld();
  }

  private TxSummary cancel(String txId) {
    return node.transactions.cancel(txId, "acme").await();
  }

  private String field(String txId, String name) {
    Response r = cmd("HGET", node.keys.stateH(txId), name);
    return r == null ? null : r.toString();
  }

  @Test
  void a_cancel_sent_while_the_last_step_runs_ends_the_transaction_cancelled_not_success() {
    String txId = node.start("one", new JsonObject());
    Promise<StepResult> step = held();
    cancel(txId);
    step.complete(StepResult.success(new JsonObject().put("done", true)));
    TxSummary s = node.awaitFinal(txId);
    assertEquals(TxStatus.CANCELLED, s.status());
    assertTrue(s.note().contains("while its last step ran (the step ended success)"), s.note());
  }

  @Test
  void a_cancel_sent_while_a_step_runs_stops_the_transaction_before_the_next_step() {
    String txId = node.start("two", new JsonObject());
    Promise<StepResult> step = held();
    cancel(txId);
    step.complete(StepResult.success(new JsonObject()));
    assertEquals(TxStatus.CANCELLED, node.awaitFinal(txId).status());
    assertEquals(0, steps.recorded.size(), "the step after the cancel did not run");
  }

  @Test
  void a_cancel_wins_over_a_sleep_the_step_asks_for() {
    String txId = node.start("one", new JsonObject());
    Promise<StepResult> step = held();
    cancel(txId);
    step.complete(new StepResult.Sleep(Duration.ofHours(1), null));
    TxSummary s = node.awaitFinal(txId);
    assertEquals(TxStatus.CANCELLED, s.status());
    assertEquals(0, node.total("ZCARD", node.keys::sleepingZ), "it did not go to sleep");
  }

  @Test
  void a_running_step_sees_the_cancel_and_may_stop_early() {
    String txId = node.start("watch", new JsonObject());
    Eventually.until(Duration.ofSeconds(10), "the step to run", () -> field(txId, "processingState"),
        "processing"::equals);
    cancel(txId);
    TxSummary s = node.awaitFinal(txId);
    assertEquals(TxStatus.CANCELLED, s.status());
    assertEquals(java.util.List.of(txId), steps.sawCancel);
  }

  @Test
  void cancelling_a_parent_cancels_its_running_child() {
    String parent = node.start("parent", new JsonObject());
    Promise<StepResult> childStep = held();
    String child = field(parent, "waitingFor");
    TxSummary p = cancel(parent);
    assertEquals(TxStatus.CANCELLED, p.status(), "a parent waiting for its child ends at once");
    assertEquals("1", field(child, "cancelRequested"), "the running child is asked to stop");
    childStep.complete(StepResult.success(new JsonObject()));
    TxSummary c = node.awaitFinal(child);
    assertEquals(TxStatus.CANCELLED, c.status());
    assertEquals(0, steps.recorded.size(), "the parent's next step never ran");
  }

  @Test
  void cancelling_the_top_of_a_chain_ends_all_three_the_running_one_when_its_step_ends() {
    String top = node.start("grandparent", new JsonObject());
    Promise<StepResult> deepest = held();
    String middle = field(top, "waitingFor");
    String bottom = field(middle, "waitingFor");
    long began = System.nanoTime();
    assertEquals(TxStatus.CANCELLED, cancel(top).status());
    assertEquals("cancelled", field(middle, "status"), "the waiting middle ends in the same script");
    assertEquals("1", field(bottom, "cancelRequested"));
    deepest.complete(StepResult.success(new JsonObject()));
    assertEquals(TxStatus.CANCELLED, node.awaitFinal(bottom).status());
    org.slf4j.LoggerFactory.getLogger(CancelTest.class).info("a chain of three ended {} ms after the cancel",
        (System.nanoTime() - began) / 1_000_000);
    assertEquals(0, steps.recorded.size());
  }

  @Test
  void a_child_that_fails_with_no_retries_left_ends_its_waiting_parent() {
    String parent = node.start("failing-parent", new JsonObject());
    TxSummary p = node.awaitFinal(parent);
    assertEquals(TxStatus.FAILED, p.status());
    assertEquals("the child pipeline ended failed: out of stock", p.note());
    assertEquals(0, steps.recorded.size());
  }

  /** The child a parent waits for, once it sleeps (bounded wait). */
  private String sleepingChild(String parent) {
    return Eventually.until(Duration.ofSeconds(10), "the child to sleep", () -> {
      String c = field(parent, "waitingFor");
      return c != null && "sleeping".equals(field(c, "processingState")) ? c : null;
    }, c -> c != null);
  }

  @Test
  void cancelling_a_parent_ends_its_sleeping_child_at_once() {
    String parent = node.start("sleepy-parent", new JsonObject());
    String child = sleepingChild(parent);
    cancel(parent);
    assertEquals("cancelled", field(child, "status"));
    assertEquals("cancelled with its parent " + parent, field(child, "note"));
    assertEquals(0, node.total("ZCARD", node.keys::sleepingZ));
  }

  @Test
  void a_cancelled_child_ends_its_waiting_parent_cancelled() {
    String parent = node.start("sleepy-parent", new JsonObject());
    String child = sleepingChild(parent);
    assertEquals(TxStatus.CANCELLED, cancel(child).status());
    TxSummary p = node.awaitFinal(parent);
    assertEquals(TxStatus.CANCELLED, p.status());
    assertTrue(p.note().startsWith("its child pipeline was cancelled"), p.note());
    assertEquals(0, steps.recorded.size());
  }
}
