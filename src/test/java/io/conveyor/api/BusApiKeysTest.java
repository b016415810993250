package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.bus.Addresses;
import io.conveyor.model.TxException;
import io.conveyor.testing.KeyedApi;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The event-bus API asks who calls: the key in the apiKey header names the owner, never the body alone. */
class BusApiKeysTest {
  private static final String STEP_KEY = "k-worker";
  private final int port = TestRedis.freePort();
  private TestNode node;
  private EventBus bus;

  @BeforeEach
  void startNode() {
    node = new TestNode().set("API_KEYS", "acme:client:" + KeyedApi.CLIENT + ",ops:admin:" + KeyedApi.ADMIN
            + ",worker:step:" + STEP_KEY).set("HTTP_PORT", Integer.toString(port))
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'paid':true}}}]}")
        .start(new TestSteps().registry());
    bus = node.node().vertx().eventBus();
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  /** The answer, or the refusal's problem with its failure code as "code". */
  private JsonObject send(String key, String address, JsonObject body) {
    DeliveryOptions options = new DeliveryOptions();
    if (key != null) {
      options.addHeader("apiKey", key);
    }
    return bus.<JsonObject>request(address, body, options).map(m -> m.body())
        .recover(e -> io.vertx.core.Future.succeededFuture(TxException.fromJson(new JsonObject(e.getMessage()))
            .toJson().put("code", ((ReplyException) e).failureCode())))
        .await();
  }

  private static JsonObject order(String owner) {
    return new JsonObject().put("type", "order").put("owner", owner).put("delay", "1h");
  }

  @Test
  void a_start_without_a_key_with_an_unknown_key_or_a_step_key_is_refused_and_writes_nothing() {
    List<String> before = TestRedis.traces(node.prefix);
    JsonObject none = send(null, Addresses.TX_START, order("acme"));
    assertEquals(401, none.getInteger("code"), none.encode());
    assertEquals("unauthorized", none.getString("type"));
    assertEquals("apiKey", none.getString("field"));
    assertTrue(none.getString("detail").contains("none"), none.encode());
    JsonObject unknown = send("k-nobody", Addresses.TX_START, order("acme"));
    assertEquals(401, unknown.getInteger("code"), unknown.encode());
    assertTrue(unknown.getString("detail").contains("an unknown one"), unknown.encode());
    JsonObject step = send(STEP_KEY, Addresses.TX_START, order("worker"));
    assertEquals(403, step.getInteger("code"), step.encode());
    assertTrue(step.getString("detail").contains("client or admin role"), step.encode());
    JsonObject noBody = send(null, Addresses.TX_STATUS, null);
    assertEquals(401, noBody.getInteger("code"), "the key is asked for before the body is looked at");
    assertEquals(before, TestRedis.traces(node.prefix));
  }

  @Test
  void a_client_key_may_not_act_for_another_owner_and_an_admin_key_may() {
    List<String> before = TestRedis.traces(node.prefix);
    JsonObject other = send(KeyedApi.CLIENT, Addresses.TX_START, order("globex"));
    assertEquals(403, other.getInteger("code"), other.encode());
    assertEquals("forbidden", other.getString("type"));
    assertEquals("owner", other.getString("field"));
    assertTrue(other.getString("detail").contains("acts for owner acme only"), other.encode());
    JsonObject event = send(KeyedApi.CLIENT, Addresses.EVENT_SEND, new JsonObject().put("owner", "globex")
        .put("name", "payment.settled").put("key", "o-1"));
    assertEquals(403, event.getInteger("code"), event.encode());
    assertEquals(before, TestRedis.traces(node.prefix), "nothing written on a refusal");

    JsonObject own = send(KeyedApi.CLIENT, Addresses.TX_START, order(null));
    assertEquals("acme", own.getString("owner"), "no owner named: the key's");
    JsonObject forGlobex = send(KeyedApi.ADMIN, Addresses.TX_START, order("globex"));
    assertEquals("globex", forGlobex.getString("owner"), forGlobex.encode());
    assertEquals("running", forGlobex.getString("status"));
    JsonObject paused = send(KeyedApi.ADMIN, Addresses.TX_PAUSE, new JsonObject().put("txId",
        forGlobex.getString("txId")).put("owner", "globex"));
    assertEquals("ops", paused.getJsonObject("paused").getString("by"), "who paused is the admin key's owner");
  }

  @Test
  void status_and_cancel_of_another_owners_transaction_with_a_client_key_tell_nothing_of_it() {
    String txId = send(KeyedApi.ADMIN, Addresses.TX_START, order("globex")).getString("txId");
    String unknown = "tx-" + "0".repeat(32);
    for (String address : List.of(Addresses.TX_STATUS, Addresses.TX_CANCEL)) {
      // naming the other owner is refused whatever the txId, so the refusal cannot tell one that exists
      JsonObject named = send(KeyedApi.CLIENT, address, new JsonObject().put("txId", txId).put("owner", "globex"));
      JsonObject namedUnknown = send(KeyedApi.CLIENT, address, new JsonObject().put("txId", unknown)
          .put("owner", "globex"));
      assertEquals(403, named.getInteger("code"), named.encode());
      assertEquals(namedUnknown, named);
      // not naming it acts for acme: another owner's transaction is not found, like an unknown one
      JsonObject mine = send(KeyedApi.CLIENT, address, new JsonObject().put("txId", txId));
      JsonObject mineUnknown = send(KeyedApi.CLIENT, address, new JsonObject().put("txId", unknown));
      assertEquals(404, mine.getInteger("code"), mine.encode());
      assertEquals(mineUnknown.getString("type"), mine.getString("type"));
      assertEquals(mineUnknown.getString("detail").replace(unknown, txId), mine.getString("detail"));
    }
    JsonObject still = send(KeyedApi.ADMIN, Addresses.TX_STATUS, new JsonObject().put("txId", txId)
        .put("owner", "globex"));
    assertEquals("running", still.getString("status"), "not cancelled");
  }

  @Test
  void the_sockjs_bridge_forwards_the_clients_key_and_its_start_acts_for_the_keys_owner() {
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    try {
      // the client is held until the end: Vert.x 5 shuts down a client nothing references (a cleaner), and a
      // garbage collection during the handshake then closed its connection (CI: "Connection evicted", then
      // "Connection closed while handshake in process"; eclipse-vertx/vert.x#5839)
      io.vertx.core.http.WebSocketClient client = vertx.createWebSocketClient();
      io.vertx.core.http.WebSocket ws = client.connect(port, "127.0.0.1", "/eventbus/websocket").await();
      io.vertx.core.Promise<JsonObject> reply = io.vertx.core.Promise.promise();
      ws.binaryMessageHandler(b -> reply.tryComplete(b.toJsonObject()));
      ws.textMessageHandler(t -> reply.tryComplete(new JsonObject(t)));
      ws.writeTextMessage(new JsonObject().put("type", "send").put("address", Addresses.TX_START)
          .put("replyAddress", "r-1").put("headers", new JsonObject().put("apiKey", KeyedApi.CLIENT))
          .put("body", new JsonObject().put("type", "order")).encode()).await();
      JsonObject frame = reply.future().await();
      assertEquals("rec", frame.getString("type"), frame.encode()); // SockJS's reply frame
      assertEquals("acme", frame.getJsonObject("body").getString("owner"));
      assertEquals("running", frame.getJsonObject("body").getString("status"), "the bus API took the forwarded key");
      client.close().await();
    } finally {
      vertx.close().await();
    }
  }
}
