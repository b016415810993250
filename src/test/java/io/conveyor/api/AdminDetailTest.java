package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/**
 * The admin detail the dashboard's timeline is drawn from: every attempt of every step, counted from 1; and what a
 * sleeping transaction awaits (an event by business key, or a switch), which the dashboard shows and sends.
 */
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

  private static void awaitSleeping(TestNode node, String txId) {
    Eventually.until(java.time.Duration.ofSeconds(10), txId + " to sleep", () -> String.valueOf(
        TestRedis.cmd("HGET", node.keys.stateH(txId), "processingState")), "sleeping"::equals);
  }

  @Test
  void a_transaction_waiting_for_an_event_says_which_event_and_key_from_its_steps_input_and_until_when() {
    try (TestNode node = new TestNode()
        .pipeline("approve", "{'name':'approve','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'orderId':'o-17'}}},"
            + "{'type':'flow/await','params':{'event':'order.approved','key':'order-${input.orderId}','timeout':'2h'}}]}")
        .pipeline("hold", "{'name':'hold','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/wait','params':{'switch':'go','timeout':'1h'}}]}")
        .pipeline("first", "{'name':'first','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/await','params':{'event':'order.approved','key':'${input.orderId}','timeout':'1h'}}]}")
        .start(new TestSteps().registry())) {
      // at the first step the step's input is the transaction's input (no data field yet): the key renders from it
      String first = node.start("first", new JsonObject().put("orderId", "o-1"));
      awaitSleeping(node, first);
      JsonObject atFirst = AdminApi.of(node.transactions, null).detail(first).await().getJsonObject("awaiting");
      assertEquals("o-1", atFirst.getString("key"), atFirst.encode());
      long before = System.currentTimeMillis();
      String txId = node.start("approve", new JsonObject().put("orderId", "not-this-one"));
      awaitSleeping(node, txId);
      AdminApi admin = AdminApi.of(node.transactions, null);
      JsonObject a = admin.detail(txId).await().getJsonObject("awaiting");
      long deadline = java.time.Instant.parse(a.getString("deadline")).toEpochMilli();
      assertTrue(deadline >= before + 7_200_000 && deadline <= System.currentTimeMillis() + 7_200_000, a.encode());
      a.remove("deadline");
      assertEquals(new JsonObject().put("step", 2).put("stepType", "flow/await").put("kind", "event")
          .put("event", "order.approved").put("owner", "acme").put("timeout", "2h").put("onTimeout", "fail")
          .put("key", "order-o-17"), a);

      String held = node.start("hold", new JsonObject());
      awaitSleeping(node, held);
      JsonObject s = admin.detail(held).await().getJsonObject("awaiting");
      assertEquals("switch", s.getString("kind"));
      assertEquals("go", s.getString("switch"));
      assertEquals(1, s.getInteger("step"));

      node.transactions.setSwitch(held, "acme", "go", true).await();
      node.awaitFinal(held);
      assertNull(admin.detail(held).await().getValue("awaiting"), "an ended transaction awaits nothing");
    }
  }
}
