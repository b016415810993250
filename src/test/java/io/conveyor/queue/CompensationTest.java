package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.pipeline.StepResult;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** onFailure: a transaction that fails or is cancelled starts its compensation pipeline, once per failure. */
class CompensationTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  @BeforeEach
  void start() {
    node = new TestNode().set("ARCHIVE_DELAY", "0s").set("ARCHIVE_INTERVAL", "20ms")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'onFailure':'undo',"
            + "'steps':[{'type':'test/record'},{'type':'test/broken'}]}")
        .pipeline("undo", "{'name':'undo','nodeGroup':'master','steps':[{'type':'test/hold'}]}")
        .pipeline("waiting", "{'name':'waiting','nodeGroup':'master','transactionType':true,'onFailure':'undo',"
            + "'steps':[{'type':'util/delay','params':{'duration':'2h'}}]}")
        .start(steps.registry());
  }

  @AfterEach
  void stop() {
    node.close();
  }

  private Promise<StepResult> held() {
    return steps.nextHeld();
  }

  private JsonObject compensation(String txId) {
    return node.transactions.status(txId, "acme").await().toJson().getJsonObject("compensation");
  }

  private JsonObject compensationEnded(String txId) {
    return Eventually.until(Duration.ofSeconds(10), txId + "'s compensation to end", () -> compensation(txId),
        c -> c != null && !"running".equals(c.getString("status")));
  }

  @Test
  void a_failed_transaction_is_compensated_once_with_its_error_and_archived_only_after() {
    String txId = node.start("order", new JsonObject().put("id", 7));
    assertEquals(TxStatus.FAILED, node.awaitFinal(txId).status());
    Promise<StepResult> undo = held();
    JsonObject running = compensation(txId);
    assertEquals("running", running.getString("status"));
    assertEquals("undo", running.getString("pipeline"));
    String undoTx = running.getString("txId");
    assertEquals(node.keys.partitionOf(txId), node.keys.partitionOf(undoTx), "the compensation is in its partition");
    JsonObject given = node.transactions.status(undoTx, "acme").await().toJson();
    assertEquals("undo", given.getString("type"));
    assertNull(cmd("ZSCORE", node.keys.toArchiveZ(node.keys.partitionOf(txId)), txId),
        "not archived while its compensation runs");

    undo.complete(StepResult.success(new JsonObject().put("undone", true)));
    JsonObject ended = compensationEnded(txId);
    assertEquals("success", ended.getString("status"));
    assertEquals(undoTx, ended.getString("txId"));
    Eventually.until(Duration.ofSeconds(10), txId + " to be archived", () -> cmd("EXISTS", node.keys.stateH(txId))
        .toInteger(), n -> n == 0);
    assertEquals("success", compensation(txId).getString("status"), "the archived transaction keeps the outcome");
    assertEquals(0, steps.held.size(), "one compensation, not two");
  }

  @Test
  void the_compensation_gets_the_failed_transactions_input_its_error_and_where_it_stopped() {
    String txId = node.start("order", new JsonObject().put("id", 7));
    node.awaitFinal(txId);
    Promise<StepResult> undo = held();
    // the compensation runs (held): its state is in Redis
    String undoTx = compensation(txId).getString("txId");
    JsonObject input = new JsonObject(cmd("HGET", node.keys.stateH(undoTx), "input").toString());
    undo.complete(StepResult.success(new JsonObject()));
    assertEquals(txId, input.getString("txId"));
    assertEquals("order", input.getString("type"));
    assertEquals("failed", input.getString("status"));
    assertEquals("the service is broken", input.getString("note"));
    assertEquals(2, input.getInteger("step"));
    assertEquals(new JsonObject().put("id", 7), input.getJsonObject("input"));
    assertEquals(new JsonObject().put("id", 7).put("recorded", true), input.getJsonObject("stepInput"),
        "the output of the steps that succeeded");
    assertEquals("the service is broken", input.getJsonArray("errors").getJsonObject(0).getString("message"));
    assertEquals("success", compensationEnded(txId).getString("status"));
  }

  @Test
  void each_run_that_fails_is_compensated_once_and_a_failing_compensation_is_reported() {
    String txId = node.start("order", new JsonObject());
    node.awaitFinal(txId);
    held().complete(StepResult.success(new JsonObject()));
    String first = compensationEnded(txId).getString("txId");

    node.transactions.rerun(txId, "acme", false).await();
    Eventually.until(Duration.ofSeconds(10), "the rerun to fail again", () -> node.transactions.status(txId, "acme")
        .await(), s -> s.status().isFinal() && s.toJson().containsKey("compensation"));
    held().complete(new StepResult.Failed("cannot undo", null));
    JsonObject second = compensationEnded(txId);
    assertNotEquals(first, second.getString("txId"));
    assertEquals("failed", second.getString("status"));
    assertEquals("cannot undo", second.getString("note"));
    assertEquals("success", node.transactions.status(txId, "acme").await().toJson().getJsonArray("runs")
        .getJsonObject(0).getJsonObject("compensation").getString("status"), "the first run's compensation is kept");
  }

  @Test
  void a_cancelled_transaction_is_compensated_too() {
    String txId = node.start("waiting", new JsonObject());
    Eventually.until(Duration.ofSeconds(10), "the delay to sleep", () -> cmd("HGET", node.keys.stateH(txId),
        "processingState").toString(), "sleeping"::equals);
    assertEquals(TxStatus.CANCELLED, node.transactions.cancel(txId, "acme").await().status());
    held().complete(StepResult.success(new JsonObject()));
    assertEquals("success", compensationEnded(txId).getString("status"));
    assertEquals(List.of(), List.copyOf(steps.held));
  }
}
