package io.conveyor.webhook;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.conveyor.testing.WebhookReceiver;
import io.conveyor.testing.WebhookReceiver.Delivery;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Webhooks on real nodes, delivered to a receiver in the test that checks every signature itself. */
class WebhookTest {
  public static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString("a-test-secret-of-32-bytes-length".getBytes());
  private static final String ORDER = "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'util/fixed-reply','params':{'reply':{'done':true}}}]}";
  private final List<TestNode> nodes = new ArrayList<>();
  private final WebhookReceiver receiver = new WebhookReceiver(SECRET);

  @AfterEach
  void stop() {
    for (int i = nodes.size() - 1; i >= 0; i--) {
      nodes.get(i).close();
    }
    receiver.close();
  }

  /** A node that may call the receiver, with a fast schedule: 100 ms, doubling, 5 attempts. */
  static TestNode webhookNode() {
    return new TestNode().set("WEBHOOKS_SECRET", SECRET).set("WEBHOOKS_ALLOW_HOSTS", "127.0.0.1")
        .set("WEBHOOKS_INTERVAL", "20ms").set("WEBHOOKS_INITIAL_DELAY", "100ms").set("WEBHOOKS_FACTOR", "2")
        .set("WEBHOOKS_MAX_ATTEMPTS", "5").set("WEBHOOKS_TIMEOUT", "2s").set("WEBHOOKS_LEASE", "1s")
        .set("WEBHOOKS_GRACE", "500ms").set("WEBHOOKS_FAILURE_LIMIT", "1000").pipeline("order", ORDER);
  }

  private TestNode start(TestNode n) {
    n.start(new TestSteps().registry());
    nodes.add(n);
    return n;
  }

  private static String startWith(TestNode n, String url, JsonObject metadata) {
    return n.transactions.start(new JsonObject().put("type", "order").put("owner", "acme").put("webhook", url)
        .put("metadata", metadata).put("input", new JsonObject())).await().txId();
  }

  private static JsonObject webhookOf(TestNode n, String txId, String status) {
    return Eventually.until(Duration.ofSeconds(15), "the webhook of " + txId + " to be " + status,
        () -> n.transactions.status(txId, "acme").await().webhook(), w -> status.equals(w.getString("status")));
  }

  @Test
  void every_delivery_is_signed_and_a_tampered_body_or_a_stale_timestamp_fails_the_receivers_check() {
    TestNode node = start(webhookNode());
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      ids.add(startWith(node, receiver.url("/hook"), new JsonObject().put("i", i)));
    }
    Eventually.until(Duration.ofSeconds(15), "20 deliveries", () -> receiver.deliveries().size(), n -> n >= 20);
    assertTrue(receiver.deliveries().stream().allMatch(Delivery::verified));
    for (String id : ids) {
      Delivery d = receiver.of(id).get(0);
      assertEquals("complete", d.json().getString("eventType"));
      assertEquals(id, d.json().getString("txId"));
      assertEquals("success", d.json().getString("status"));
      assertEquals(new JsonObject().put("done", true), d.json().getJsonObject("output"));
      assertTrue(d.signature().startsWith("v1,"));
      long now = System.currentTimeMillis() / 1000;
      assertTrue(receiver.verify(d.id(), d.timestamp(), d.body(), d.signature(), now));
      assertFalse(receiver.verify(d.id(), d.timestamp(), d.body().replace("true", "false"), d.signature(), now));
      assertFalse(receiver.verify(d.id(), d.timestamp(), d.body(), d.signature(), now + 301));
      JsonObject state = webhookOf(node, id, "delivered");
      assertEquals(1, state.getInteger("attempts"));
      assertEquals(200, state.getInteger("lastCode"));
      assertEquals(receiver.url("/hook"), state.getString("url"));
    }
    // a stale timestamp signed with the right secret is refused too
    Delivery d = receiver.deliveries().get(0);
    long old = d.timestamp() - 400;
    String resigned = new Signer(SECRET).sign(d.id(), old, d.body());
    assertFalse(receiver.verify(d.id(), old, d.body(), resigned, System.currentTimeMillis() / 1000));
    assertTrue(receiver.verify(d.id(), old, d.body(), resigned, old + 10));
  }

  @Test
  void a_receiver_that_fails_three_times_gets_one_successful_delivery_after_four_attempts_spaced_by_the_schedule() {
    receiver.answer((id, n) -> n <= 3 ? 500 : 200);
    TestNode node = start(webhookNode());
    String txId = startWith(node, receiver.url("/flaky"), new JsonObject());
    JsonObject state = webhookOf(node, txId, "delivered");
    List<Delivery> tries = receiver.of(txId);
    assertEquals(4, tries.size());
    assertEquals(4, state.getInteger("attempts"));
    assertEquals(1, tries.stream().filter(t -> t.status() == 200).count());
    assertTrue(tries.stream().allMatch(Delivery::verified));
    long[] nominal = {100, 200, 400};
    for (int i = 1; i < tries.size(); i++) {
      long gapMs = (tries.get(i).at() - tries.get(i - 1).at()) / 1_000_000;
      // jitter takes up to a fifth off a delay, never adds to it
      assertTrue(gapMs >= nominal[i - 1] * 8 / 10, "gap " + i + " was " + gapMs + " ms, schedule " + nominal[i - 1]);
    }
  }

  @Test
  void gone_stops_at_once_and_an_always_failing_receiver_ends_exhausted_with_an_event() {
    receiver.answer((id, n) -> 410);
    TestNode node = start(webhookNode());
    String gone = startWith(node, receiver.url("/gone"), new JsonObject());
    assertEquals(1, webhookOf(node, gone, "gone").getInteger("attempts"));
    receiver.answer((id, n) -> 503);
    String failing = startWith(node, receiver.url("/down"), new JsonObject());
    JsonObject state = webhookOf(node, failing, "exhausted");
    assertEquals(5, state.getInteger("attempts"));
    assertEquals(5, receiver.of(failing).size());
    assertEquals(1, receiver.of(gone).size());
    assertEquals("HTTP 503", state.getString("lastError"));
    boolean logged = false;
    for (var e : cmd("LRANGE", node.keys.eventsL(node.keys.partitionOf(failing)), "0", "-1")) {
      JsonObject event = new JsonObject(e.toString());
      logged |= event.getString("kind").equals("webhook-exhausted")
          && failing.equals(event.getJsonObject("details").getString("txId"));
    }
    assertTrue(logged, "eventsL has the exhausted delivery");
    assertNull(cmd("EXISTS", node.keys.webhookH(failing)).toLong() == 0 ? null : "left");
  }

  @Test
  void a_url_failing_past_the_limit_is_paused_nothing_reaches_it_meanwhile_and_delivery_resumes_after() {
    receiver.answer((id, n) -> 500);
    TestNode node = start(webhookNode().set("WEBHOOKS_FAILURE_LIMIT", "3").set("WEBHOOKS_PAUSE", "1500ms")
        .set("WEBHOOKS_MAX_ATTEMPTS", "10"));
    String txId = startWith(node, receiver.url("/paused"), new JsonObject());
    Eventually.until(Duration.ofSeconds(10), "three failures", () -> receiver.of(txId).size(), n -> n >= 3);
    receiver.answer((id, n) -> 200);
    JsonObject state = webhookOf(node, txId, "delivered");
    List<Delivery> tries = receiver.of(txId);
    assertEquals(4, tries.size(), "no attempt during the pause");
    long pausedMs = (tries.get(3).at() - tries.get(2).at()) / 1_000_000;
    assertTrue(pausedMs >= 1500 - 25, "the 4th attempt came " + pausedMs + " ms after the 3rd, within the pause");
    assertEquals(4, state.getInteger("attempts"));
    boolean logged = false;
    for (var e : cmd("LRANGE", node.keys.eventsL(node.keys.partitionOf(txId)), "0", "-1")) {
      logged |= new JsonObject(e.toString()).getString("kind").equals("webhook-url-paused");
    }
    assertTrue(logged, "eventsL has the pause");
  }

  @Test
  void a_long_poll_reply_with_poll_reply_cancels_webhook_cancels_the_delivery() {
    TestNode node = start(webhookNode().set("WEBHOOKS_POLL_GRACE", "2s").set("HTTP_PORT",
        Integer.toString(io.conveyor.testing.TestRedis.freePort())).set("API_KEYS", "acme:client:k-acme"));
    io.vertx.core.Vertx client = io.vertx.core.Vertx.vertx();
    try {
      var http = client.createHttpClient();
      JsonObject body = new JsonObject().put("type", "order").put("input", new JsonObject())
          .put("webhook", receiver.url("/poll")).put("metadata", new JsonObject().put("pollReplyCancelsWebhook", true));
      JsonObject reply = http.request(io.vertx.core.http.HttpMethod.POST, node.config().http().port(), "127.0.0.1",
              "/api/v1/transactions?wait=10")
          .compose(r -> r.putHeader("authorization", "Bearer k-acme").putHeader("content-type", "application/json")
              .send(body.encode()))
          .compose(r -> r.body()).await().toJsonObject();
      String polled = reply.getString("txId");
      assertEquals("success", reply.getString("status"), reply.encode());
      assertEquals("cancelled", reply.getJsonObject("webhook").getString("status"));
      // without the flag, the same receiver is called
      String plain = startWith(node, receiver.url("/poll"), new JsonObject());
      webhookOf(node, plain, "delivered");
      assertEquals(0L, cmd("EXISTS", node.keys.webhookH(polled)).toLong());
      assertNull(cmd("ZSCORE", node.keys.webhooksZ(node.keys.partitionOf(polled)), polled));
      assertEquals(0, receiver.of(polled).size());
      assertEquals("cancelled", node.transactions.status(polled, "acme").await().webhook().getString("status"));
    } finally {
      client.close().await();
    }
  }

  @Test
  void loopback_and_private_targets_are_refused_unless_allowed_and_bad_urls_fail_the_start() {
    TestNode strict = start(new TestNode().set("WEBHOOKS_SECRET", SECRET).pipeline("order", ORDER));
    List<String> before = io.conveyor.testing.TestRedis.traces(strict.prefix);
    Map<String, String> refused = new HashMap<>();
    for (String url : List.of(receiver.url("/x"), "http://10.1.2.3/x", "http://169.254.169.254/latest",
        "http://[::1]:8080/x", "ftp://example.com/x", "http://user:pw@example.com/x", "http:///x", "not a url")) {
      TxException e = assertThrows(TxException.class, () -> startWith(strict, url, new JsonObject()));
      assertEquals("webhook", e.field(), url);
      refused.put(url, e.getMessage());
    }
    assertTrue(refused.get(receiver.url("/x")).contains("127.0.0.1"), refused.toString());
    assertEquals(before.stream().sorted().toList(), io.conveyor.testing.TestRedis.traces(strict.prefix).stream()
        .sorted().toList(), "a refused start writes nothing");
    TestNode allowed = start(webhookNode());
    String txId = startWith(allowed, receiver.url("/ok"), new JsonObject());
    webhookOf(allowed, txId, "delivered");
    TestNode noSecret = start(new TestNode().set("WEBHOOKS_ALLOW_HOSTS", "127.0.0.1").pipeline("order", ORDER));
    TxException e = assertThrows(TxException.class, () -> startWith(noSecret, receiver.url("/x"), new JsonObject()));
    assertTrue(e.getMessage().contains("webhooks.secret"), e.getMessage());
  }

  @Test
  void the_guard_knows_internal_addresses_from_public_ones() throws Exception {
    for (String internal : List.of("127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254",
        "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fd00:ec2::254", "::ffff:127.0.0.1", "224.0.0.1")) {
      assertFalse(io.conveyor.net.OutboundGuard.isPublic(java.net.InetAddress.getByName(internal)), internal);
    }
    for (String pub : List.of("8.8.8.8", "1.1.1.1", "2001:4860:4860::8888")) {
      assertTrue(io.conveyor.net.OutboundGuard.isPublic(java.net.InetAddress.getByName(pub)), pub);
    }
  }

  @Test
  void delivery_goes_on_after_archiving_and_its_outcome_reaches_the_archive() {
    // the receiver refuses until the test has seen the delivery pending past archiving (no race with the backoff)
    AtomicBoolean open = new AtomicBoolean();
    receiver.answer((id, n) -> open.get() ? 200 : 500);
    // (attempts 0.4 s, 0.8 s, 1.6 s … apart, 10 of them: still pending however long the archiving takes here)
    TestNode node = start(webhookNode().set("WEBHOOKS_INITIAL_DELAY", "400ms").set("WEBHOOKS_MAX_ATTEMPTS", "10")
        .set("ARCHIVE_DELAY", "0s").set("ARCHIVE_INTERVAL", "50ms"));
    String txId = startWith(node, receiver.url("/late"), new JsonObject());
    Eventually.until(Duration.ofSeconds(10), "archiving", () -> cmd("EXISTS", node.keys.stateH(txId)).toLong(),
        n -> n == 0);
    TxSummary archived = node.transactions.status(txId, "acme").await();
    assertEquals("pending", archived.webhook().getString("status"), archived.toJson().encode());
    open.set(true);
    JsonObject state = webhookOf(node, txId, "delivered");
    assertEquals(receiver.of(txId).size(), state.getInteger("attempts"), "each call counted once");
    Eventually.until(Duration.ofSeconds(10), "the outcome to reach the archive",
        () -> cmd("EXISTS", node.keys.webhookH(txId)).toLong(), n -> n == 0);
    assertEquals("delivered", node.node().archive().find(txId).await().summary().webhook().getString("status"));
    assertEquals(1, receiver.of(txId).stream().filter(d -> d.status() == 200).count());
  }

  @Test
  void progress_reports_go_out_as_progress_webhooks_when_the_metadata_asks_for_them() {
    TestNode node = start(webhookNode().pipeline("steps", "{'name':'steps','nodeGroup':'master',"
        + "'transactionType':true,'steps':[{'type':'test/progress'}]}"));
    String asked = node.transactions.start(new JsonObject().put("type", "steps").put("owner", "acme")
        .put("webhook", receiver.url("/progress")).put("metadata", new JsonObject().put("progressReports", true))
        .put("input", new JsonObject())).await().txId();
    String quiet = node.transactions.start(new JsonObject().put("type", "steps").put("owner", "acme")
        .put("webhook", receiver.url("/progress")).put("input", new JsonObject())).await().txId();
    webhookOf(node, asked, "delivered");
    webhookOf(node, quiet, "delivered");
    Eventually.until(Duration.ofSeconds(10), "both progress webhooks", () -> receiver.of(asked + "-p2").size(),
        n -> n == 1);
    JsonObject first = receiver.of(asked + "-p1").get(0).json();
    assertEquals("progress", first.getString("eventType"));
    assertEquals(asked, first.getString("txId"));
    assertEquals(new JsonObject().put("percent", 50), first.getJsonObject("progressReport"));
    assertEquals(new JsonObject().put("percent", 90),
        receiver.of(asked + "-p2").get(0).json().getJsonObject("progressReport"));
    assertEquals("complete", receiver.of(asked).get(0).json().getString("eventType"));
    assertEquals(1, receiver.of(quiet).size(), "no progress webhooks unless asked");
    assertEquals(0, receiver.deliveries().stream().filter(d -> d.id().startsWith(quiet + "-p")).count());
    assertEquals(new JsonObject().put("percent", 90),
        node.transactions.status(quiet, "acme").await().progressReport());
    assertTrue(receiver.deliveries().stream().allMatch(Delivery::verified));
  }

  @Test
  void two_webhook_nodes_deliver_a_thousand_events_exactly_once() {
    TestNode a = start(webhookNode().set("WEBHOOKS_CONCURRENCY", "50"));
    start(a.sibling());
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      ids.add(startWith(a, receiver.url("/bulk"), new JsonObject()));
    }
    Eventually.until(Duration.ofSeconds(60), "1000 deliveries", () -> receiver.deliveries().size(), n -> n >= 1000);
    Eventually.until(Duration.ofSeconds(10), "every result recorded",
        () -> a.total("ZCARD", a.keys::webhooksZ), n -> n == 0);
    for (String id : ids) {
      assertEquals(1, receiver.of(id).size(), id);
    }
    assertEquals(1000, receiver.deliveries().size());
    assertTrue(receiver.deliveries().stream().allMatch(Delivery::verified));
  }
}
