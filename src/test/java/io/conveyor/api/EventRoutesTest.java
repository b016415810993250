package io.conveyor.api;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.model.TxStatus;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** POST /api/v1/events over a real socket: whose event it is, and what a bad one is told. */
class EventRoutesTest {
  private final HttpClient http = HttpClient.newHttpClient();
  private TestNode node;
  private String base;

  @BeforeEach
  void startNode() {
    int port = TestRedis.freePort();
    base = "http://127.0.0.1:" + port;
    node = new TestNode().set("HTTP_PORT", Integer.toString(port))
        .set("API_KEYS", "acme:client:k-acme,globex:client:k-globex,ops:admin:k-ops")
        .pipeline("pay", "{'name':'pay','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/await','params':{'event':'payment.settled','key':'${input.orderId}'}}]}")
        .start(new TestSteps().registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private record Reply(int status, JsonObject body) {
  }

  private Reply post(String key, JsonObject body) {
    HttpRequest r = HttpRequest.newBuilder(URI.create(base + "/api/v1/events"))
        .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.encode())).build();
    try {
      HttpResponse<String> a = http.send(r, HttpResponse.BodyHandlers.ofString());
      return new Reply(a.statusCode(), new JsonObject(a.body()));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private String waiting(String orderId) {
    String txId = node.start("pay", new JsonObject().put("orderId", orderId));
    Eventually.until(Duration.ofSeconds(10), "the await to sleep", () -> cmd("HGET", node.keys.stateH(txId),
        "processingState").toString(), "sleeping"::equals);
    return txId;
  }

  private static JsonObject event(String key) {
    return new JsonObject().put("name", "payment.settled").put("key", key).put("payload", new JsonObject());
  }

  @Test
  void a_client_key_wakes_its_own_owners_waiter_and_another_owners_key_wakes_nothing() {
    String txId = waiting("o-1"); // started for acme
    Reply foreign = post("k-globex", event("o-1"));
    assertEquals(200, foreign.status());
    assertEquals(new JsonObject().put("outcome", "kept").put("woken", 0),
        new JsonObject().put("outcome", foreign.body().getString("outcome")).put("woken", foreign.body().getInteger("woken")));
    Reply own = post("k-acme", event("o-1"));
    assertEquals("delivered", own.body().getString("outcome"));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
  }

  @Test
  void a_client_naming_another_owner_is_refused_and_an_admin_may_name_one() {
    Reply refused = post("k-globex", event("o-2").put("owner", "acme"));
    assertEquals(403, refused.status());
    assertEquals("owner", refused.body().getString("field"));
    String txId = waiting("o-2");
    Reply admin = post("k-ops", event("o-2").put("owner", "acme"));
    assertEquals(1, admin.body().getInteger("woken"));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
  }

  @Test
  void an_unknown_field_or_a_bad_deliver_is_refused_naming_it() {
    Reply unknown = post("k-acme", event("o-3").put("colour", "red"));
    assertEquals(400, unknown.status());
    assertEquals("colour", unknown.body().getString("field"));
    Reply deliver = post("k-acme", event("o-3").put("deliver", "every"));
    assertEquals(400, deliver.status());
    assertEquals("deliver", deliver.body().getString("field"));
  }

  @Test
  void one_owners_flood_of_events_is_held_to_its_start_rate_and_another_owner_sends_on() {
    node.close();
    int port = TestRedis.freePort();
    base = "http://127.0.0.1:" + port;
    // a hand-moved clock: on the real one a slow second between the first and third event refills a token
    node = new TestNode().clock(new io.conveyor.testing.MutableClock(System.currentTimeMillis()))
        .set("HTTP_PORT", Integer.toString(port)).set("HTTP_START_RATE", "1")
        .set("HTTP_START_BURST", "2").set("API_KEYS", "acme:client:k-acme,globex:client:k-globex")
        .start(new TestSteps().registry());
    assertEquals(200, post("k-acme", event("f-1")).status());
    assertEquals(200, post("k-acme", event("f-2")).status());
    Reply flood = post("k-acme", event("f-3"));
    assertEquals(429, flood.status(), flood.body().encode());
    assertEquals("rate-limited", flood.body().getString("type"));
    // nothing kept of the refused one; the other owner's bucket is its own
    assertEquals(200, post("k-globex", event("f-3")).status());
  }
}
