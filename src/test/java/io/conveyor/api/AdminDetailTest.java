package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** The admin detail the dashboard's timeline is drawn from: every attempt of every step, counted from 1. */
class AdminDetailTest {
  @Test
  void the_detail_lists_every_attempt_with_its_time_node_and_output_size_and_counts_steps_from_one() {
    TestSteps steps = new TestSteps();
    try (TestNode node = new TestNode().set("REAPER_INTERVAL", "100ms")
        .pipeline("fragile", "{'name':'fragile','nodeGroup':'master','transactionType':true,"
            + "'retry':{'maxAttempts':2,'initialInterval':'50ms','maxInterval':'50ms'},'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'prepared':true}}},{'type':'test/broken'}]}")
        .start(steps.registry())) {
      String txId = node.start("fragile", new JsonObject());
      assertEquals("failed", node.awaitFinal(txId).status().wire());
      JsonObject d = AdminApi.of(node.transactions, null).detail(txId).await();

      JsonArray attempts = d.getJsonArray("attempts");
      assertEquals(3, attempts.size(), attempts.encode());
      JsonObject first = attempts.getJsonObject(0);
      assertEquals(1, first.getInteger("step"));
      assertEquals(node.node().nodeId(), first.getString("node"));
      assertEquals(new JsonObject().put("prepared", true).encode().length(), first.getLong("outputSize"));
      for (int i = 1; i < 3; i++) {
        JsonObject failed = attempts.getJsonObject(i);
        assertEquals(2, failed.getInteger("step"));
        assertEquals(node.node().nodeId(), failed.getString("node"));
        assertNull(failed.getValue("outputSize"), "a failed attempt checkpointed nothing");
        assertTrue(failed.getString("started").compareTo(attempts.getJsonObject(i - 1).getString("started")) >= 0);
      }
      JsonArray errors = d.getJsonObject("summary").getJsonArray("errors");
      assertEquals(2, errors.size());
      assertEquals(2, errors.getJsonObject(1).getInteger("step"), "errors count steps from 1, as attempts do");
      JsonArray stepList = d.getJsonArray("steps");
      assertEquals(1, stepList.getJsonObject(0).getInteger("step"));
      assertEquals("done", stepList.getJsonObject(0).getString("state"));
      assertEquals(2, stepList.getJsonObject(1).getInteger("step"));
      assertEquals("ended", stepList.getJsonObject(1).getString("state"));
    }
  }
}
