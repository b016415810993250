package io.conveyor.api;

import io.conveyor.bus.Addresses;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.BridgeClient;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A raw TCP client speaking the bridge protocol (4-byte length, then JSON), as a program in any language would. */
class TcpBridgeTest {
  private TestNode node;
  private BridgeClient bridge;
  private final List<JsonObject> early = new java.util.ArrayList<>();

  @BeforeEach
  void startNode() throws IOException {
    int port = TestRedis.freePort();
    node = new TestNode().set("BRIDGE_TCP_PORT", Integer.toString(port))
        .set("API_KEYS", "acme:client:secret-acme,ops:admin:secret-ops,worker:step:secret-worker,"
            + "boss:client+admin:secret-boss")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .pipeline("charge", "{'name':'charge','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'eventbus','params':{'address':'steps.charge'}}]}")
        .start(new TestSteps().registry());
    bridge = new BridgeClient(port);
  }

  @AfterEach
  void stopNode() throws IOException {
    bridge.close();
    node.close();
  }

  private JsonObject call(String address, String key, JsonObject body, String replyTo) throws IOException {
    write(new JsonObject().put("type", "send").put("address", address).put("replyAddress", replyTo)
        .put("body", body), key);
    // the reply and other frames (a step request, a completion event) may arrive in either order
    while (true) {
      JsonObject frame = readFrame();
      if (replyTo.equals(frame.getString("address")) || "err".equals(frame.getString("type"))) {
        return frame;
      }
      early.add(frame);
    }
  }

  private void write(JsonObject frame, String key) throws IOException {
    bridge.write(frame, key);
  }

  private boolean probeArrives() {
    node.node().vertx().eventBus().publish("conveyor.tx.completed.acme", new JsonObject().put("probe", true));
    try {
      JsonObject frame = early.isEmpty() ? bridge.poll(Duration.ofMillis(200)) : early.remove(0);
      return frame != null && frame.getJsonObject("body").containsKey("probe");
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private JsonObject read() throws IOException {
    return early.isEmpty() ? readFrame() : early.remove(0);
  }

  private JsonObject readFrame() throws IOException {
    return bridge.read();
  }

  private static JsonObject order() {
    return new JsonObject().put("type", "order").put("input", new JsonObject());
  }

  @Test
  void a_request_forwarded_by_the_bridge_with_a_key_that_has_the_admin_role_is_audited_via_bridge()
      throws IOException {
    JsonObject byBoss = call(Addresses.TX_START, "secret-boss", order(), "r-boss");
    assertEquals("message", byBoss.getString("type"), byBoss.encode());
    assertEquals("message", call(Addresses.TX_START, "secret-acme", order(), "r-acme").getString("type"));
    String boss = io.conveyor.model.AuditEntry.keyId(io.conveyor.config.ApiKeyHash.of("secret-boss"));
    var entries = Eventually.until(Duration.ofSeconds(20), "the boss's start in the audit table",
        () -> node.node().archive().audit(new io.conveyor.database.AuditQuery(null, null, null, null, null, null, null,
            null, 100)).await(), l -> !l.isEmpty());
    assertEquals(1, entries.size(), "the client key's start is its own act: " + entries);
    assertEquals(boss, entries.get(0).keyId());
    assertEquals("bridge", entries.get(0).via());
    assertEquals(Addresses.TX_START, entries.get(0).action());
    assertEquals("ok", entries.get(0).outcome());
    assertEquals("boss", entries.get(0).params().getString("actedFor"));
  }

  @Test
  void a_client_with_a_key_starts_a_transaction_as_the_keys_owner_and_reads_its_status() throws IOException {
    JsonObject started = call(Addresses.TX_START, "secret-acme", order(), "r-1");
    assertEquals("message", started.getString("type"), started.encode());
    JsonObject summary = started.getJsonObject("body");
    assertEquals("acme", summary.getString("owner"));
    String txId = summary.getString("txId");
    JsonObject done = Eventually.until(Duration.ofSeconds(10), "the order to finish", () -> {
      try {
        return call(Addresses.TX_STATUS, "secret-acme", new JsonObject().put("txId", txId), "r-2").getJsonObject("body");
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }, b -> "success".equals(b.getString("status")));
    assertEquals(new JsonObject().put("ok", true), done.getJsonObject("output"));
  }

  @Test
  void a_client_sends_an_event_as_the_keys_owner_and_may_not_send_one_for_another() throws IOException {
    JsonObject sent = call(Addresses.EVENT_SEND, "secret-acme", new JsonObject().put("name", "payment.settled")
        .put("key", "o-1").put("id", "e-1"), "r-1");
    assertEquals("message", sent.getString("type"), sent.encode());
    assertEquals("kept", sent.getJsonObject("body").getString("outcome"));
    JsonObject refused = call(Addresses.EVENT_SEND, "secret-acme", new JsonObject().put("name", "payment.settled")
        .put("key", "o-1").put("owner", "globex"), "r-2");
    assertEquals("err", refused.getString("type"), refused.encode());
    assertEquals("access_denied", refused.getString("message"), refused.encode());
  }

  @Test
  void a_message_without_a_valid_client_key_or_to_another_address_is_refused_and_changes_nothing()
      throws IOException {
    List<String> before = TestRedis.traces(node.prefix);
    for (JsonObject refused : List.of(
        call(Addresses.TX_START, null, order(), "r-1"),
        call(Addresses.TX_START, "wrong", order(), "r-2"),
        call(Addresses.TX_START, "secret-ops", order(), "r-3"),
        call("conveyor.internal.anything", "secret-acme", order(), "r-4"),
        call(Addresses.TX_START, "secret-acme", order().put("owner", "someone-else"), "r-5"))) {
      assertEquals("err", refused.getString("type"), refused.encode());
      assertEquals("access_denied", refused.getString("message"), refused.encode());
      assertTrue(refused.getString("reason").length() > 10, refused.encode());
    }
    assertEquals(before.stream().sorted().toList(), TestRedis.traces(node.prefix).stream().sorted().toList());
    JsonObject other = call(Addresses.TX_START, "secret-acme", order().put("owner", "someone-else"), "r-6");
    assertTrue(other.getString("reason").contains("acts for owner acme only, not someone-else"), other.encode());
  }

  @Test
  void an_operator_listens_to_the_clusters_facts_read_only_and_a_client_may_not() throws IOException {
    bridge.register(Addresses.NODE_DIED, "secret-acme");
    JsonObject refused = read();
    assertEquals("err", refused.getString("type"), "a client key may not hear of dead nodes");
    assertEquals(Addresses.NODE_DIED, refused.getString("address"), refused.encode());
    assertEquals("listening to " + Addresses.NODE_DIED + " needs a key with the admin role",
        refused.getString("reason"));
    bridge.register(Addresses.NODE_DIED, "secret-ops");
    JsonObject fact = io.conveyor.bus.Messages.encode(new io.conveyor.bus.NodeDied("node-x", "heartbeat expired", 3,
        "node-y", 1L));
    JsonObject heard = Eventually.until(Duration.ofSeconds(5), "the fact to reach the operator", () -> {
      node.node().vertx().eventBus().publish(Addresses.NODE_DIED, fact);
      try {
        return bridge.poll(Duration.ofMillis(200));
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }, f -> f != null);
    assertEquals(fact, heard.getJsonObject("body"));
    write(new JsonObject().put("type", "publish").put("address", Addresses.NODE_DIED).put("body", fact), "secret-ops");
    JsonObject answer = read();
    while ("message".equals(answer.getString("type")) && fact.equals(answer.getJsonObject("body"))) {
      answer = read(); // a probe that came late
    }
    assertEquals("err", answer.getString("type"), "facts are read-only: " + answer.encode());
  }

  @Test
  void a_client_hears_of_its_own_owners_completions_and_may_not_listen_to_another_owners() throws IOException {
    write(new JsonObject().put("type", "register").put("address", "conveyor.tx.completed.globex"), "secret-acme");
    assertEquals("err", read().getString("type"));
    write(new JsonObject().put("type", "register").put("address", "conveyor.tx.completed.acme"), "secret-acme");
    // a registration has no reply: publish probes until one reaches the client
    Eventually.until(Duration.ofSeconds(5), "the bridge's registration", this::probeArrives, b -> b);
    String txId = call(Addresses.TX_START, "secret-acme", order(), "r-1").getJsonObject("body").getString("txId");
    JsonObject event = read();
    while (event.getJsonObject("body").containsKey("probe")) {
      event = read(); // a late probe
    }
    assertEquals("conveyor.tx.completed.acme", event.getString("address"), event.encode());
    assertEquals(new JsonObject().put("txId", txId).put("status", "success"), event.getJsonObject("body"));
  }

  @Test
  void a_bridge_client_with_a_step_key_serves_an_eventbus_step() throws IOException {
    write(new JsonObject().put("type", "register").put("address", "steps.charge"), "secret-acme");
    assertEquals("err", read().getString("type"), "a client key may not serve steps");
    write(new JsonObject().put("type", "register").put("address", "steps.charge"), "secret-worker");
    Eventually.until(Duration.ofSeconds(5), "the step server's registration", () -> {
      try {
        // request/reply needs a consumer; until the registration lands, the node answers no handlers
        return node.node().vertx().eventBus().request("steps.charge", new JsonObject()).transform(ar ->
            io.vertx.core.Future.succeededFuture(ar.failed() && String.valueOf(ar.cause().getMessage())
                .contains("No handlers"))).await(200, java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        return false; // it reached the client, which does not answer probes
      }
    }, noHandlers -> !noHandlers);
    assertEquals("steps.charge", read().getString("address"), "the probe that found the registration");
    String txId = call(Addresses.TX_START, "secret-acme", new JsonObject().put("type", "charge")
        .put("input", new JsonObject().put("amount", 9)), "r-1").getJsonObject("body").getString("txId");
    JsonObject request = read();
    assertEquals(new JsonObject().put("amount", 9), request.getJsonObject("body"));
    assertEquals(txId, request.getJsonObject("headers").getString("txId"));
    write(new JsonObject().put("type", "send").put("address", request.getString("replyAddress"))
        .put("body", new JsonObject().put("status", "success").put("output", new JsonObject().put("charged", 9))),
        "secret-worker");
    JsonObject done = Eventually.until(Duration.ofSeconds(10), "the charge to finish", () -> {
      try {
        return call(Addresses.TX_STATUS, "secret-acme", new JsonObject().put("txId", txId), "r-2").getJsonObject("body");
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }, b -> !"running".equals(b.getString("status")));
    assertEquals("success", done.getString("status"), done.encode());
    assertEquals(new JsonObject().put("charged", 9), done.getJsonObject("output"));
  }
}
