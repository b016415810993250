package io.conveyor.api;

import io.conveyor.bus.Addresses;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxException;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.KeyedApi;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** conveyor.tx.start and conveyor.tx.status over the event bus, as a program in the same Vert.x calls them. */
class BusApiTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;
  private EventBus bus;

  @BeforeEach
  void startNode() {
    node = new TestNode()
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'paid':true}}}]}")
        .pipeline("pay", "{'name':'pay','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/await','params':{'event':'payment.settled','key':'${input.orderId}'}}]}")
        .pipeline("held", "{'name':'held','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/hold'},{'type':'test/record'}]}")
        .start(steps.registry());
    bus = node.node().vertx().eventBus();
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  /** A request with acme's client key. */
  private JsonObject request(String address, Object body) {
    return requestAs(KeyedApi.CLIENT, address, body);
  }

  /** A request with an admin's key: it acts for the owner the body names. */
  private JsonObject admin(String address, Object body) {
    return requestAs(KeyedApi.ADMIN, address, body);
  }

  private JsonObject requestAs(String key, String address, Object body) {
    return bus.<JsonObject>request(address, body, new DeliveryOptions().addHeader("apiKey", key)).await().body();
  }

  @Test
  void a_program_sends_an_event_that_wakes_its_owners_waiting_step_and_a_bad_owner_is_refused() {
    String txId = request(Addresses.TX_START, new JsonObject().put("type", "pay").put("owner", "acme")
        .put("input", new JsonObject().put("orderId", "o-9"))).getString("txId");
    Eventually.until(Duration.ofSeconds(10), "the await to sleep", () -> io.conveyor.testing.TestRedis.cmd("HGET",
        node.keys.stateH(txId), "processingState").toString(), "sleeping"::equals);
    JsonObject sent = request(Addresses.EVENT_SEND, new JsonObject().put("owner", "acme").put("name", "payment.settled")
        .put("key", "o-9").put("payload", new JsonObject().put("ok", true)));
    assertEquals("delivered", sent.getString("outcome"));
    assertEquals(1, sent.getInteger("woken"));
    assertEquals("success", node.awaitFinal(txId).status().wire());
    ReplyException refused = assertThrows(ReplyException.class, () -> admin(Addresses.EVENT_SEND,
        new JsonObject().put("owner", "ac\u0085me").put("name", "payment.settled").put("key", "o-9")));
    assertEquals("owner", TxException.fromJson(new JsonObject(refused.getMessage())).field());
  }

  @Test
  void a_program_pauses_a_running_transaction_at_its_step_boundary_and_resumes_it() {
    String txId = request(Addresses.TX_START, new JsonObject().put("type", "held").put("owner", "acme"))
        .getString("txId");
    io.vertx.core.Promise<io.conveyor.pipeline.StepResult> step = steps.nextHeld();
    JsonObject paused = request(Addresses.TX_PAUSE, new JsonObject().put("txId", txId).put("owner", "acme")
        .put("reason", "hold on"));
    assertEquals("hold on", paused.getJsonObject("paused").getString("reason"));
    assertEquals("acme", paused.getJsonObject("paused").getString("by"));
    step.complete(io.conveyor.pipeline.StepResult.success(new JsonObject()));
    Eventually.until(Duration.ofSeconds(10), "it to park at the boundary", () -> String.valueOf(
        io.conveyor.testing.TestRedis.cmd("HGET", node.keys.stateH(txId), "pausedQueue")), "in"::equals);
    assertEquals(0, steps.recorded.size(), "the next step did not start");
    ReplyException unknown = assertThrows(ReplyException.class, () -> request(Addresses.TX_RESUME,
        new JsonObject().put("txId", txId).put("owner", "acme").put("timer", "skip")));
    assertEquals("timer", TxException.fromJson(new JsonObject(unknown.getMessage())).field());
    ReplyException other = assertThrows(ReplyException.class, () -> admin(Addresses.TX_RESUME,
        new JsonObject().put("txId", txId).put("owner", "globex")));
    assertEquals(404, other.failureCode(), "another owner's is not found");
    JsonObject resumed = request(Addresses.TX_RESUME, new JsonObject().put("txId", txId).put("owner", "acme"));
    assertTrue(!resumed.containsKey("paused"));
    assertEquals("success", node.awaitFinal(txId).status().wire());
    ReplyException notPaused = assertThrows(ReplyException.class, () -> request(Addresses.TX_RESUME,
        new JsonObject().put("txId", txId).put("owner", "acme")));
    assertEquals(409, notPaused.failureCode());
  }

  @Test
  void a_program_starts_a_transaction_and_reads_its_outcome() {
    JsonObject started = request(Addresses.TX_START, new JsonObject().put("type", "order").put("owner", "acme")
        .put("externalId", "o-1").put("input", new JsonObject().put("amount", 5)));
    String txId = started.getString("txId");
    assertEquals("running", started.getString("status"));
    JsonObject done = Eventually.until(Duration.ofSeconds(10), "the order to finish",
        () -> request(Addresses.TX_STATUS, new JsonObject().put("txId", txId).put("owner", "acme")),
        s -> !"running".equals(s.getString("status")));
    assertEquals("success", done.getString("status"));
    assertEquals(new JsonObject().put("paid", true), done.getJsonObject("output"));
    assertEquals("o-1", done.getString("externalId"));
  }

  @Test
  void an_identifier_with_a_nul_a_lone_surrogate_or_a_tab_is_refused_naming_the_field_and_other_letters_pass() {
    for (String bad : List.of("o\u00001", "o\ud8001", "o\t1")) {
      ReplyException refused = assertThrows(ReplyException.class, () -> request(Addresses.TX_START,
          new JsonObject().put("type", "order").put("owner", "acme").put("externalId", bad)));
      assertEquals(400, refused.failureCode());
      TxException problem = TxException.fromJson(new JsonObject(refused.getMessage()));
      assertEquals("externalId", problem.field(), refused.getMessage());
      assertTrue(problem.getMessage().contains("at index 1"), problem.getMessage());
    }
    ReplyException owner = assertThrows(ReplyException.class, () -> admin(Addresses.TX_START,
        new JsonObject().put("type", "order").put("owner", "ac\u0085me")));
    assertEquals("owner", TxException.fromJson(new JsonObject(owner.getMessage())).field());
    ReplyException status = assertThrows(ReplyException.class, () -> admin(Addresses.TX_STATUS,
        new JsonObject().put("txId", "tx-" + "0".repeat(32)).put("owner", "ac\u007fme")));
    assertEquals(400, status.failureCode());
    assertTrue(status.getMessage().contains("U+007F"), status.getMessage());
    JsonObject started = request(Addresses.TX_START, new JsonObject().put("type", "order").put("owner", "acme")
        .put("externalId", "Bestellung-Größe-ñ-東京-\ud83d\ude00"));
    assertEquals("Bestellung-Größe-ñ-東京-\ud83d\ude00", started.getString("externalId"));
  }

  @Test
  void a_program_starts_under_a_debounce_and_a_refusing_throttle_over_the_bus() {
    JsonObject debounce = new JsonObject().put("type", "order").put("owner", "acme")
        .put("input", new JsonObject().put("doc", "d-1")).put("debounce", new JsonObject()
            .put("key", "${input.doc}").put("period", "1h"));
    JsonObject first = request(Addresses.TX_START, debounce);
    JsonObject again = request(Addresses.TX_START, debounce);
    assertEquals(first.getString("txId"), again.getString("txId"));
    assertEquals(true, again.getBoolean("debounced"));
    JsonObject throttled = new JsonObject().put("type", "order").put("owner", "acme")
        .put("input", new JsonObject().put("k", "x")).put("throttle", new JsonObject().put("key", "${input.k}")
            .put("limit", 1).put("period", "1m").put("onLimit", "refuse"));
    request(Addresses.TX_START, throttled);
    ReplyException refused = assertThrows(ReplyException.class, () -> request(Addresses.TX_START, throttled));
    assertEquals(429, refused.failureCode());
    TxException problem = TxException.fromJson(new JsonObject(refused.getMessage()));
    assertEquals(TxException.Kind.THROTTLED, problem.kind());
    assertEquals(60, problem.retryAfter());
  }

  @Test
  void a_switch_value_over_max_payload_bytes_is_refused_413_naming_the_limit() {
    String txId = request(Addresses.TX_START, new JsonObject().put("type", "order").put("owner", "acme"))
        .getString("txId");
    ReplyException big = assertThrows(ReplyException.class, () -> request(Addresses.TX_SWITCH, new JsonObject()
        .put("txId", txId).put("owner", "acme").put("name", "go").put("value", "x".repeat(1_048_576))));
    assertEquals(413, big.failureCode());
    TxException problem = TxException.fromJson(new JsonObject(big.getMessage()));
    assertEquals("value", problem.field());
    assertTrue(problem.getMessage().endsWith("over the limit of 1048576"), problem.getMessage());
  }

  @Test
  void refusals_come_back_as_failures_with_the_status_code_and_a_problem_body() {
    JsonObject body = new JsonObject().put("type", "order").put("owner", "acme").put("externalId", "o-1");
    String first = request(Addresses.TX_START, body).getString("txId");
    ReplyException dup = assertThrows(ReplyException.class, () -> request(Addresses.TX_START, body));
    assertEquals(409, dup.failureCode());
    TxException problem = TxException.fromJson(new JsonObject(dup.getMessage()));
    assertEquals(TxException.Kind.DUPLICATE_EXTERNAL_ID, problem.kind());
    assertEquals(first, problem.txId());
    ReplyException notJson = assertThrows(ReplyException.class, () -> request(Addresses.TX_START, "hello"));
    assertEquals(400, notJson.failureCode());
    ReplyException missing = assertThrows(ReplyException.class, () -> request(Addresses.TX_STATUS,
        new JsonObject().put("txId", "tx-" + "0".repeat(32)).put("owner", "acme")));
    assertEquals(404, missing.failureCode());
    ReplyException notText = assertThrows(ReplyException.class,
        () -> request(Addresses.TX_STATUS, new JsonObject().put("txId", 5).put("owner", "acme")));
    assertEquals(400, notText.failureCode());
  }

  @Test
  void cancel_stops_a_running_transaction_at_its_next_step_and_refuses_an_ended_one() throws Exception {
    ConveyorClient client = new ConveyorClient(node.node().vertx(), io.conveyor.testing.KeyedApi.CLIENT);
    String txId = client.start("held", "acme", new JsonObject()).await().txId();
    var held = steps.held.poll(10, java.util.concurrent.TimeUnit.SECONDS);
    assertEquals(io.conveyor.model.TxStatus.RUNNING, client.cancel(txId, "acme").await().status());
    held.complete(io.conveyor.pipeline.StepResult.success(new JsonObject()));
    assertEquals(io.conveyor.model.TxStatus.CANCELLED, node.awaitFinal(txId).status());
    org.junit.jupiter.api.Assertions.assertTrue(steps.recorded.isEmpty(), "the step after the cancel ran");
    TxException again = assertThrows(TxException.class, () -> client.cancel(txId, "acme").await());
    assertEquals(TxException.Kind.ALREADY_FINAL, again.kind());
    assertEquals(TxException.Kind.NOT_FOUND, assertThrows(TxException.class,
        () -> new ConveyorClient(node.node().vertx(), KeyedApi.ADMIN).cancel(txId, "globex").await()).kind());
  }
}
