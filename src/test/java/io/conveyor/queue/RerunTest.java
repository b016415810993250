package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxException;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A failed transaction runs again under its txId once the cause is fixed: from the failed step, or from the start. */
class RerunTest {
  private static final String FOUR = "{'name':'four','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'test/record'},{'type':'test/record'},{'type':'test/broken'},{'type':'test/record'}]}";
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  @AfterEach
  void stop() {
    node.close();
  }

  private long runsOfRecord(String txId) {
    return steps.recorded.stream().filter(r -> r.getString("txId").equals(txId)).count();
  }

  @Test
  void a_transaction_failed_at_step_3_of_4_runs_again_from_step_3_once_fixed() {
    node = new TestNode().pipeline("four", FOUR).start(steps.registry());
    String txId = node.start("four", new JsonObject().put("n", 1));
    assertEquals(TxStatus.FAILED, node.awaitFinal(txId).status());
    assertEquals(2, runsOfRecord(txId));

    steps.broken.set(false);
    // the answer is read after the rerun: the transaction may have ended again by then
    TxSummary again = node.transactions.rerun(txId, "acme", false).await();
    assertEquals(txId, again.txId());
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, done.status(), done.note());
    assertEquals(3, runsOfRecord(txId), "steps 1 and 2 did not run again; step 4 ran once");
    assertEquals(new JsonObject().put("n", 1).put("recorded", true).put("fixed", true), done.output());
    JsonObject earlier = node.transactions.status(txId, "acme").await().toJson().getJsonArray("runs").getJsonObject(0);
    assertEquals("failed", earlier.getString("status"));
    assertEquals(3, earlier.getInteger("step"));
    assertEquals("the service is broken", earlier.getString("note"));
  }

  @Test
  void a_run_from_the_start_runs_every_step_again_and_a_success_is_not_rerun() {
    node = new TestNode().pipeline("four", FOUR).start(steps.registry());
    String txId = node.start("four", new JsonObject());
    node.awaitFinal(txId);
    steps.broken.set(false);
    node.transactions.rerun(txId, "acme", true).await();
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
    assertEquals(5, runsOfRecord(txId), "2 in the first run, 3 in the second");
    TxException twice = assertThrows(TxException.class, () -> node.transactions.rerun(txId, "acme", false).await());
    assertEquals(TxException.Kind.NOT_RERUNNABLE, twice.kind());
    assertTrue(twice.getMessage().contains("ended success"), twice.getMessage());
    assertEquals(TxException.Kind.NOT_FOUND, assertThrows(TxException.class,
        () -> node.transactions.rerun(txId, "someone-else", false).await()).kind());
  }

  @Test
  void an_archived_failed_transaction_is_brought_back_and_runs_again_from_its_failed_step() {
    node = new TestNode().set("ARCHIVE_DELAY", "0s").set("ARCHIVE_INTERVAL", "20ms").pipeline("four", FOUR)
        .start(steps.registry());
    String txId = node.start("four", new JsonObject());
    node.awaitFinal(txId);
    Eventually.until(Duration.ofSeconds(10), txId + " to be archived",
        () -> cmd("EXISTS", node.keys.stateH(txId)).toInteger(), n -> n == 0);
    steps.broken.set(false);
    assertEquals(txId, node.transactions.rerun(txId, "acme", false).await().txId());
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, done.status(), done.note());
    assertEquals(3, runsOfRecord(txId));
    // archived again with its last state
    Eventually.until(Duration.ofSeconds(10), txId + " to be archived again",
        () -> cmd("EXISTS", node.keys.stateH(txId)).toInteger(), n -> n == 0);
    assertEquals(TxStatus.SUCCESS, node.transactions.status(txId, "acme").await().status());
  }
}
