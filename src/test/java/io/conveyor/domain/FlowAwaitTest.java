package io.conveyor.domain;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxException;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.StepResult;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** flow/await and business events on a real node and Redis: before, during and after the wait; one, all; ids. */
class FlowAwaitTest {
  private final TestSteps steps = new TestSteps();
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private TestNode node;
  private Events events;

  @BeforeEach
  void startNode() {
    node = new TestNode().clock(clock).set("REAPER_INTERVAL", "50ms")
        .pipeline("pay", "{'name':'pay','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/await','params':{'event':'payment.settled','key':'${input.orderId}','timeout':'1h'}},"
            + "{'type':'test/record'}]}")
        .pipeline("held", "{'name':'held','nodeGroup':'master','transactionType':true,'steps':[{'type':'test/hold'},"
            + "{'type':'flow/await','params':{'event':'payment.settled','key':'${input.orderId}','timeout':'1h'}}]}")
        .pipeline("lenient", "{'name':'lenient','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/await','params':{'event':'payment.settled','key':'${input.orderId}','timeout':'1h',"
            + "'onTimeout':'continue','default':{'paid':false}}}]}")
        .pipeline("on-order", "{'name':'on-order','nodeGroup':'master','transactionType':true,"
            + "'startOn':{'event':'order.placed'},'steps':["
            + "{'type':'flow/await','params':{'event':'order.placed','key':'${input.orderId}','timeout':'1m'}}]}")
        .start(steps.registry());
    events = Events.on(node.transactions, node.node().catalog(), node.config());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private Events.Sent send(String owner, String key, String deliver, String id, JsonObject payload) {
    JsonObject b = new JsonObject().put("name", "payment.settled").put("key", key).put("payload", payload);
    if (deliver != null) {
      b.put("deliver", deliver);
    }
    if (id != null) {
      b.put("id", id);
    }
    return events.send(owner, b).await();
  }

  private void awaitSleeping(String txId) {
    Eventually.until(Duration.ofSeconds(10), txId + " to wait", () -> cmd("HGET", node.keys.stateH(txId),
        "processingState").toString(), "sleeping"::equals);
  }

  private String startPay(String orderId) {
    String txId = node.start("pay", new JsonObject().put("orderId", orderId));
    awaitSleeping(txId);
    return txId;
  }

  @Test
  void an_event_sent_during_the_wait_wakes_it_and_its_payload_is_the_output() {
    String txId = startPay("o-1");
    Events.Sent sent = send("acme", "o-1", null, "e-1", new JsonObject().put("amount", 5));
    assertEquals("delivered", sent.outcome());
    assertEquals(java.util.List.of(txId), sent.woken());
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, done.status());
    JsonObject event = done.output().getJsonObject("event");
    assertEquals(new JsonObject().put("id", "e-1").put("name", "payment.settled").put("key", "o-1")
        .put("payload", new JsonObject().put("amount", 5)), event);
  }

  @Test
  void an_event_sent_before_the_transaction_reaches_its_wait_is_kept_and_taken_when_the_wait_begins() {
    String txId = node.start("held", new JsonObject().put("orderId", "o-2"));
    var hold = steps.nextHeld();
    Events.Sent sent = send("acme", "o-2", null, null, new JsonObject().put("ok", true));
    assertEquals("kept", sent.outcome());
    hold.complete(StepResult.success(new JsonObject().put("orderId", "o-2")));
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, done.status());
    assertEquals(sent.id(), done.output().getJsonObject("event").getString("id"));
    // taken: a second waiter of the key finds nothing kept
    String second = startPay("o-2");
    assertEquals("sleeping", cmd("HGET", node.keys.stateH(second), "processingState").toString());
  }

  @Test
  void a_wait_whose_event_comes_after_the_timeout_fails_and_the_late_event_is_kept_for_another() {
    String txId = startPay("o-3");
    clock.advance(Duration.ofHours(1));
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.FAILED, done.status());
    assertEquals("no event payment.settled with key o-3 came within 1h", done.note());
    Events.Sent late = send("acme", "o-3", null, null, new JsonObject());
    assertEquals("kept", late.outcome());
    assertEquals(0, late.woken().size());
  }

  @Test
  void an_event_racing_the_deadline_either_wakes_its_waiter_or_is_kept_for_the_next_never_both_nor_lost() {
    java.util.List<String> waiters = new java.util.ArrayList<>();
    for (int i = 0; i < 10; i++) {
      waiters.add(startPay("race-" + i));
    }
    clock.advance(Duration.ofHours(1)); // every wait falls due now: the node's wake loop and the sends race
    int woke = 0;
    for (int i = 0; i < 10; i++) {
      Events.Sent sent = send("acme", "race-" + i, null, null, new JsonObject().put("i", i));
      TxSummary done = node.awaitFinal(waiters.get(i));
      if (sent.woken().contains(waiters.get(i))) {
        woke++;
        assertEquals(TxStatus.SUCCESS, done.status(), "woken, so it ran on with the event");
        assertEquals(sent.id(), done.output().getJsonObject("event").getString("id"));
      } else {
        assertEquals("kept", sent.outcome(), "not delivered, so kept");
        assertEquals(TxStatus.FAILED, done.status(), "timed out: " + done.toJson().encode());
        String next = node.start("pay", new JsonObject().put("orderId", "race-" + i));
        assertEquals(sent.id(), node.awaitFinal(next).output().getJsonObject("event").getString("id"),
            "the kept event is taken by the next waiter of its key");
      }
    }
    System.out.println("deadline race: " + woke + " of 10 woken, " + (10 - woke) + " timed out and kept");
  }

  @Test
  void on_timeout_continue_goes_on_with_the_default_output() {
    String txId = node.start("lenient", new JsonObject().put("orderId", "o-4"));
    awaitSleeping(txId);
    clock.advance(Duration.ofHours(1));
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, done.status());
    assertEquals(new JsonObject().put("paid", false), done.output());
  }

  @Test
  void deliver_one_wakes_the_first_waiter_only_and_deliver_all_wakes_every_waiter() {
    String first = startPay("o-5");
    String second = startPay("o-5");
    String third = startPay("o-5");
    Events.Sent one = send("acme", "o-5", "one", null, new JsonObject().put("n", 1));
    assertEquals(java.util.List.of(first), one.woken());
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(first).status());
    assertEquals("sleeping", cmd("HGET", node.keys.stateH(second), "processingState").toString());
    Events.Sent all = send("acme", "o-5", "all", null, new JsonObject().put("n", 2));
    assertEquals(java.util.Set.of(second, third), java.util.Set.copyOf(all.woken()));
    assertEquals(2, node.awaitFinal(second).output().getJsonObject("event").getJsonObject("payload").getInteger("n"));
    assertEquals(2, node.awaitFinal(third).output().getJsonObject("event").getJsonObject("payload").getInteger("n"));
  }

  @Test
  void a_one_event_delivered_to_a_waiter_cancelled_meanwhile_goes_to_the_next_and_with_none_is_kept() {
    String cancelled = startPay("o-10");
    String next = startPay("o-10");
    node.transactions.cancelTree(cancelled, "acme").await();
    Events.Sent one = send("acme", "o-10", "one", null, new JsonObject().put("n", 1));
    assertEquals(java.util.List.of(next), one.woken());
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(next).status());
    String alone = startPay("o-11");
    node.transactions.cancelTree(alone, "acme").await();
    Events.Sent kept = send("acme", "o-11", "one", "e-11", new JsonObject());
    assertEquals("kept", kept.outcome());
    String later = node.start("pay", new JsonObject().put("orderId", "o-11"));
    assertEquals("e-11", node.awaitFinal(later).output().getJsonObject("event").getString("id"));
  }

  @Test
  void the_same_id_sent_twice_is_recorded_once() {
    Events.Sent once = send("acme", "o-6", null, "pay-6", new JsonObject().put("n", 1));
    Events.Sent twice = send("acme", "o-6", null, "pay-6", new JsonObject().put("n", 2));
    assertEquals("kept", once.outcome());
    assertTrue(twice.duplicate());
    String txId = node.start("pay", new JsonObject().put("orderId", "o-6"));
    assertEquals(1, node.awaitFinal(txId).output().getJsonObject("event").getJsonObject("payload").getInteger("n"));
    // nothing else was kept: the next waiter waits
    String next = startPay("o-6");
    assertEquals("sleeping", cmd("HGET", node.keys.stateH(next), "processingState").toString());
  }

  @Test
  void another_owners_event_of_the_same_name_and_key_wakes_nothing() {
    String txId = startPay("o-7");
    Events.Sent foreign = send("mallory", "o-7", null, null, new JsonObject());
    assertEquals("kept", foreign.outcome());
    assertEquals(0, foreign.woken().size());
    assertEquals("sleeping", cmd("HGET", node.keys.stateH(txId), "processingState").toString());
  }

  @Test
  void an_event_nobody_waits_for_starts_its_startOn_pipeline_once_which_takes_it() {
    JsonObject b = new JsonObject().put("name", "order.placed").put("key", "o-8").put("id", "place-8")
        .put("payload", new JsonObject().put("orderId", "o-8"));
    Events.Sent started = events.send("acme", b).await();
    assertEquals("started", started.outcome());
    assertNotNull(started.txId());
    TxSummary done = node.awaitFinal(started.txId());
    assertEquals(TxStatus.SUCCESS, done.status());
    assertEquals("place-8", done.output().getJsonObject("event").getString("id"));
    Events.Sent again = events.send("acme", b).await();
    assertTrue(again.duplicate());
    assertEquals(started.txId(), again.txId());
  }

  @Test
  void a_bad_event_is_refused_naming_its_field() {
    TxException e = assertThrows(TxException.class, () -> events.send("acme", new JsonObject()
        .put("name", "payment.settled").put("key", "o-9").put("deliver", "some")).await());
    assertEquals("deliver", e.field());
    e = assertThrows(TxException.class, () -> events.send("acme", new JsonObject().put("name", "bad name")
        .put("key", "k")).await());
    assertEquals("name", e.field());
  }
}
