package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.OwnerStore;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** maxPayloadBytes on a step's output: too large fails the step output-too-large, and the worker goes on. */
class OutputLimitTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  @BeforeEach
  void startNode() {
    String big = "x".repeat(300);
    node = new TestNode()
        .pipeline("big", "{'name':'big','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'text':'" + big + "'}}},{'type':'test/record'}],"
            + "'retry':{'maxAttempts':3,'initialInterval':'10ms'}}")
        .pipeline("small", "{'name':'small','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .start(steps.registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private TxSummary run(String owner, String type) {
    return node.awaitFinal(node.transactions.start(new JsonObject().put("type", type).put("owner", owner))
        .await().txId());
  }

  @Test
  void an_output_over_the_owners_max_payload_bytes_fails_its_step_once_and_other_work_goes_on() {
    node.store.owners.put("acme", new OwnerStore.Limits(null, null, null, null, 100, 0)).await();

    TxSummary refused = run("acme", "big");
    assertEquals(TxStatus.FAILED, refused.status(), refused.note());
    assertTrue(refused.note().contains("over maxPayloadBytes = 100 (owner acme's own)"), refused.note());
    JsonArray errors = refused.toJson().getJsonArray("errors");
    assertEquals(1, errors.size(), "not retried: the same step gives the same output " + errors);
    assertEquals("output-too-large", errors.getJsonObject(0).getString("code"));
    assertEquals(0, steps.recorded.size(), "the step after it never ran");

    // the node goes on: the owner's small work, and another owner's large output (the default 1 MiB holds)
    assertEquals(TxStatus.SUCCESS, run("acme", "small").status());
    TxSummary other = run("globex", "big");
    assertEquals(TxStatus.SUCCESS, other.status(), other.note());
    assertEquals(300, other.output().getString("text").length());
  }
}
