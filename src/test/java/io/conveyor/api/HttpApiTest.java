package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.pipeline.StepResult;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The HTTP API over a real socket, as a client sees it. */
class HttpApiTest {
  private final TestSteps steps = new TestSteps();
  private final HttpClient http = HttpClient.newHttpClient();
  private TestNode node;
  private String base;

  /** A node serving HTTP on a free port, which the test then calls. */
  private TestNode withHttp() {
    int port = TestRedis.freePort();
    base = "http://127.0.0.1:" + port;
    return new TestNode().set("HTTP_PORT", Integer.toString(port));
  }

  @BeforeEach
  void startNode() {
    node = withHttp().set("HTTP_MAX_BODY_BYTES", "2048")
        .set("API_KEYS", "acme:client:k-acme,globex:client:k-globex,ops:admin:k-ops")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .pipeline("held", "{'name':'held','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/hold'},{'type':'test/record'}]}")
        .pipeline("approval", "{'name':'approval','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/wait','params':{'switch':'approve'}}]}")
        .pipeline("fragile", "{'name':'fragile','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/record'},{'type':'test/broken'}]}")
        .start(steps.registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private record Reply(int status, String type, JsonObject body, String retryAfter) {
  }

  private Reply send(String method, String path, String key, String contentType, String body) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      b.header("Authorization", "Bearer " + key);
    }
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    try {
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      return new Reply(r.statusCode(), r.headers().firstValue("content-type").orElse(""), new JsonObject(r.body()),
          r.headers().firstValue("retry-after").orElse(null));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private Reply call(String method, String path, String key, JsonObject body) {
    return send(method, path, key, body == null ? null : "application/json", body == null ? null : body.encode());
  }

  private static JsonObject order() {
    return new JsonObject().put("type", "order").put("input", new JsonObject());
  }

  @Test
  void a_client_starts_a_transaction_and_long_polls_its_outcome() {
    Reply started = call("POST", "/api/v1/transactions", "k-acme", order());
    assertEquals(202, started.status());
    assertEquals("acme", started.body().getString("owner"));
    Reply done = call("GET", "/api/v1/transactions/" + started.body().getString("txId") + "?wait=10", "k-acme", null);
    assertEquals(200, done.status());
    assertEquals("success", done.body().getString("status"));
    assertEquals(new JsonObject().put("ok", true), done.body().getJsonObject("output"));
    Reply waited = call("POST", "/api/v1/transactions?wait=10", "k-acme", order());
    assertEquals(200, waited.status());
    assertEquals("success", waited.body().getString("status"));
  }

  @Test
  void a_long_poll_answers_as_soon_as_the_transaction_completes() throws Exception {
    String txId = call("POST", "/api/v1/transactions", "k-acme", new JsonObject().put("type", "held"))
        .body().getString("txId");
    var held = steps.held.poll(10, TimeUnit.SECONDS);
    CompletableFuture<Reply> poll = CompletableFuture.supplyAsync(() ->
        call("GET", "/api/v1/transactions/" + txId + "?wait=30", "k-acme", null));
    // the poll is waiting; only the completion can answer it before its 30 s
    held.complete(StepResult.success(new JsonObject()));
    Reply r = poll.get(20, TimeUnit.SECONDS);
    assertEquals("success", r.body().getString("status"));
  }

  @Test
  void keys_decide_who_may_call_and_whose_transactions_they_see() {
    Reply none = call("POST", "/api/v1/transactions", null, order());
    assertEquals(401, none.status());
    assertEquals("application/problem+json", none.type());
    assertEquals("unauthorized", none.body().getString("type"));
    String txId = call("POST", "/api/v1/transactions", "k-acme", order()).body().getString("txId");
    Reply other = call("GET", "/api/v1/transactions/" + txId, "k-globex", null);
    Reply unknown = call("GET", "/api/v1/transactions/tx-" + "0".repeat(32), "k-globex", null);
    assertEquals(404, other.status());
    assertEquals(unknown.status(), other.status());
    assertEquals(unknown.body().getString("type"), other.body().getString("type"));
    // no route lets another owner see or touch it
    call("POST", "/api/v1/transactions", "k-acme", order().put("externalId", "mine"));
    assertEquals(404, call("GET", "/api/v1/transactions?externalId=mine", "k-globex", null).status());
    assertEquals(404, call("POST", "/api/v1/transactions/" + txId + "/cancel", "k-globex", null).status());
    assertEquals(404, call("PUT", "/api/v1/transactions/" + txId + "/switches/go", "k-globex",
        new JsonObject().put("value", 1)).status());
    assertEquals(0, TestRedis.cmd("HEXISTS", node.keys.stateH(txId), "switches").toInteger());
  }

  @Test
  void a_clients_mistakes_answer_problems_with_the_field_at_fault_and_write_nothing() {
    List<String> before = TestRedis.traces(node.prefix);
    assertEquals(415, send("POST", "/api/v1/transactions", "k-acme", "text/plain", "{}").status());
    Reply notJson = send("POST", "/api/v1/transactions", "k-acme", "application/json", "{oops");
    assertEquals(400, notJson.status());
    assertEquals("body", notJson.body().getString("field"));
    Reply big = call("POST", "/api/v1/transactions", "k-acme", order().put("input",
        new JsonObject().put("x", "y".repeat(5000))));
    assertEquals(413, big.status());
    assertEquals("too-large", big.body().getString("type"));
    Reply unknown = call("POST", "/api/v1/transactions", "k-acme", order().put("type", "nope"));
    assertEquals(404, unknown.status());
    assertEquals("type", unknown.body().getString("field"));
    assertEquals(400, call("POST", "/api/v1/transactions", "k-acme", order().put("input", 5)).status());
    // the owner's rate bucket counts attempts, refused ones too; nothing else is written
    assertEquals(before.stream().sorted().toList(), TestRedis.traces(node.prefix).stream()
        .filter(k -> !k.equals(node.keys.rateH("acme"))).sorted().toList());
  }

  @Test
  void a_wait_past_the_maximum_another_owner_in_the_body_and_a_group_nobody_has_are_refused_and_write_nothing() {
    List<String> before = TestRedis.traces(node.prefix);
    Reply tooLong = call("POST", "/api/v1/transactions?wait=31", "k-acme", order());
    assertEquals(400, tooLong.status());
    assertEquals("wait", tooLong.body().getString("field"));
    assertTrue(tooLong.body().getString("detail").contains("from 0 to 30 (http.maxWait)"), tooLong.body().encode());
    assertEquals(400, call("GET", "/api/v1/transactions/tx-" + "0".repeat(32) + "?wait=45", "k-acme", null).status());
    Reply other = call("POST", "/api/v1/transactions", "k-acme", order().put("owner", "globex"));
    assertEquals(403, other.status());
    assertEquals("forbidden", other.body().getString("type"));
    assertEquals("owner", other.body().getString("field"));
    assertTrue(other.body().getString("detail").contains("acts for owner acme only, not globex"),
        other.body().encode());
    for (String action : List.of("pause", "drain", "resume")) {
      Reply typo = call("POST", "/api/v1/admin/groups/mastr/" + action, "k-ops", null);
      assertEquals(404, typo.status(), action);
      assertTrue(typo.body().getString("detail").contains("no node group mastr"), typo.body().encode());
    }
    assertEquals(400, call("POST", "/api/v1/admin/groups/master/drain?wait=301", "k-ops", null).status());
    assertEquals(before.stream().sorted().toList(), TestRedis.traces(node.prefix).stream()
        .filter(k -> !k.equals(node.keys.rateH("acme"))).sorted().toList());
    // its own owner named, and the longest wait, are fine
    assertEquals(200, call("POST", "/api/v1/transactions?wait=30", "k-acme", order().put("owner", "acme")).status());
    assertEquals("running", call("GET", "/api/v1/admin/groups/master", "k-ops", null).body().getString("state"));
  }

  @Test
  void an_identifier_with_a_nul_a_lone_surrogate_or_a_tab_is_refused_400_naming_it_and_other_letters_pass() {
    // the body as text: a lone surrogate survives only as a JSON escape (UTF-8 has no form for it)
    for (String bad : List.of("o\\u00001", "o\\ud8001", "o\\t1")) {
      Reply r = send("POST", "/api/v1/transactions", "k-acme", "application/json",
          "{\"type\":\"order\",\"externalId\":\"" + bad + "\"}");
      assertEquals(400, r.status(), bad);
      assertEquals("externalId", r.body().getString("field"), r.body().encode());
      assertTrue(r.body().getString("detail").contains("at index 1"), r.body().encode());
    }
    Reply group = call("POST", "/api/v1/admin/groups/mas%09ter/pause", "k-ops", null);
    assertEquals(400, group.status());
    assertTrue(group.body().getString("detail").contains("U+0009"), group.body().encode());
    Reply sw = call("PUT", "/api/v1/transactions/tx-" + "0".repeat(32) + "/switches/go%00", "k-acme",
        new JsonObject().put("value", 1));
    assertEquals(400, sw.status());
    assertEquals("name", sw.body().getString("field"), sw.body().encode());
    Reply ok = call("POST", "/api/v1/transactions", "k-acme", order().put("externalId", "Größe-ñ-東京"));
    assertEquals(202, ok.status());
    assertEquals("Größe-ñ-東京", ok.body().getString("externalId"));
  }

  @Test
  void an_owner_at_its_max_live_is_answered_429_live_limit_with_retry_after_and_others_are_not() {
    // maxLive = partitions: a share of 1 in each, and every start below lands in partition 0 (one on a single Redis)
    int parts = node.keys.partitions();
    Reply set = call("PUT", "/api/v1/admin/owners/acme", "k-ops", new JsonObject().put("maxLive", parts));
    assertEquals(200, set.status(), set.body().encode());
    assertEquals(parts, set.body().getInteger("maxLive"));
    assertEquals("api", set.body().getString("maxLiveFrom"));
    assertEquals(1048576, set.body().getInteger("maxPayloadBytes"), "the default applies where none is set");
    assertEquals(400, call("PUT", "/api/v1/admin/owners/acme", "k-ops", new JsonObject().put("maxLive", 0)).status());
    List<String> ids = externalIdsIn(0, "acme", 2);
    assertEquals(202, call("POST", "/api/v1/transactions", "k-acme", waiting(ids.get(0))).status());

    Reply refused = call("POST", "/api/v1/transactions", "k-acme", waiting(ids.get(1)));
    assertEquals(429, refused.status());
    assertEquals("application/problem+json", refused.type());
    assertEquals("live-limit", refused.body().getString("type"));
    assertTrue(refused.body().getString("detail").contains("maxLive = " + parts), refused.body().encode());
    assertEquals("5", refused.retryAfter());
    assertEquals(202, call("POST", "/api/v1/transactions", "k-globex", waiting(externalIdsIn(0, "globex", 1).get(0)))
        .status());
    JsonObject inForce = call("GET", "/api/v1/cluster", "k-ops", null).body().getJsonObject("limits");
    assertEquals(100000, inForce.getInteger("maxLive"));
    assertEquals(2048, inForce.getInteger("maxBodyBytes"));
  }

  private static JsonObject waiting(String externalId) {
    return new JsonObject().put("type", "approval").put("externalId", externalId);
  }

  /** n externalIds of the owner whose transactions land in partition p. */
  private List<String> externalIdsIn(int p, String owner, int n) {
    List<String> out = new java.util.ArrayList<>();
    for (int i = 0; out.size() < n; i++) {
      if (node.keys.partitionFor(owner, "e-" + i) == p) {
        out.add("e-" + i);
      }
    }
    return out;
  }

  @Test
  void an_owner_over_its_start_rate_is_answered_429_with_retry_after_and_others_are_not() {
    node.close();
    // a hand-moved clock: on the real one a slow second between the first and third call refills a token
    io.conveyor.testing.MutableClock clock = new io.conveyor.testing.MutableClock(System.currentTimeMillis());
    node = withHttp().clock(clock).set("HTTP_START_RATE", "1")
        .set("HTTP_START_BURST", "2").set("API_KEYS", "acme:client:k-acme,globex:client:k-globex")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .start(steps.registry());
    assertEquals(202, call("POST", "/api/v1/transactions", "k-acme", order()).status());
    assertEquals(202, call("POST", "/api/v1/transactions", "k-acme", order()).status());
    Reply limited = call("POST", "/api/v1/transactions", "k-acme", order());
    assertEquals(429, limited.status());
    assertEquals("rate-limited", limited.body().getString("type"));
    assertEquals("1", limited.retryAfter());
    assertEquals(202, call("POST", "/api/v1/transactions", "k-globex", order()).status());
    clock.advance(java.time.Duration.ofSeconds(1));
    assertEquals(202, call("POST", "/api/v1/transactions", "k-acme", order()).status(), "a second later: one more");
    assertEquals(429, call("POST", "/api/v1/transactions", "k-acme", order()).status());
  }

  @Test
  void an_externalId_is_unique_and_finds_its_transaction() {
    String txId = call("POST", "/api/v1/transactions", "k-acme", order().put("externalId", "o-1")).body()
        .getString("txId");
    Reply dup = call("POST", "/api/v1/transactions", "k-acme", order().put("externalId", "o-1"));
    assertEquals(409, dup.status());
    assertEquals(txId, dup.body().getString("txId"));
    assertEquals(txId, call("GET", "/api/v1/transactions?externalId=o-1", "k-acme", null).body().getString("txId"));
    assertEquals(404, call("GET", "/api/v1/transactions?externalId=o-1", "k-globex", null).status());
    // with any other parameter it is a search: a list, the caller's own only
    JsonObject found = call("GET", "/api/v1/transactions?externalId=o-1&limit=5", "k-acme", null).body();
    assertEquals(1, found.getJsonArray("transactions").size());
    assertEquals(txId, found.getJsonArray("transactions").getJsonObject(0).getString("txId"));
    assertEquals(0, call("GET", "/api/v1/transactions?externalId=o-1&limit=5", "k-globex", null).body()
        .getJsonArray("transactions").size());
    Reply other = call("GET", "/api/v1/transactions?owner=globex", "k-acme", null);
    assertEquals(400, other.status());
    assertEquals(400, call("GET", "/api/v1/transactions?status=done", "k-acme", null).status());
    assertEquals(400, call("GET", "/api/v1/transactions?limit=2&limit=3", "k-acme", null).status());
    // an admin searches across owners
    JsonObject any = call("GET", "/api/v1/admin/transactions?owner=acme&pipeline=order", "k-ops", null).body();
    assertEquals(txId, any.getJsonArray("transactions").getJsonObject(0).getString("txId"));
    assertEquals(0, call("GET", "/api/v1/admin/transactions?owner=globex", "k-ops", null).body()
        .getJsonArray("transactions").size());
  }

  @Test
  void cancel_and_switches_act_on_a_waiting_transaction() {
    String waiting = call("POST", "/api/v1/transactions", "k-acme", new JsonObject().put("type", "approval"))
        .body().getString("txId");
    io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "the wait to sleep",
        () -> TestRedis.cmd("HGET", node.keys.stateH(waiting), "processingState").toString(), "sleeping"::equals);
    assertEquals(200, call("PUT", "/api/v1/transactions/" + waiting + "/switches/approve", "k-acme",
        new JsonObject().put("value", "yes")).status());
    Reply approved = call("GET", "/api/v1/transactions/" + waiting + "?wait=10", "k-acme", null);
    assertEquals("success", approved.body().getString("status"));
    assertEquals(409, call("POST", "/api/v1/transactions/" + waiting + "/cancel", "k-acme", null).status());

    String other = call("POST", "/api/v1/transactions", "k-acme", new JsonObject().put("type", "approval"))
        .body().getString("txId");
    io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "the wait to sleep",
        () -> TestRedis.cmd("HGET", node.keys.stateH(other), "processingState").toString(), "sleeping"::equals);
    Reply cancelled = call("POST", "/api/v1/transactions/" + other + "/cancel", "k-acme", null);
    assertEquals(200, cancelled.status());
    assertEquals("cancelled", cancelled.body().getString("status"));

    // a cancelled one runs again; a succeeded one does not; from must be failed or start
    assertEquals(400, call("POST", "/api/v1/transactions/" + other + "/retry?from=middle", "k-acme", null).status());
    assertEquals(404, call("POST", "/api/v1/transactions/" + other + "/retry", "k-globex", null).status());
    Reply again = call("POST", "/api/v1/transactions/" + other + "/retry", "k-acme", null);
    assertEquals(200, again.status());
    assertEquals("running", again.body().getString("status"));
    assertEquals("cancelled", again.body().getJsonArray("runs").getJsonObject(0).getString("status"));
    Reply notAgain = call("POST", "/api/v1/transactions/" + waiting + "/retry", "k-acme", null);
    assertEquals(409, notAgain.status());
    assertEquals("not-rerunnable", notAgain.body().getString("type"));
  }

  @Test
  void pause_and_resume_over_http_one_by_txId_and_many_by_search_with_bad_input_refused() {
    String waiting = call("POST", "/api/v1/transactions", "k-acme", new JsonObject().put("type", "approval"))
        .body().getString("txId");
    io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "the wait to sleep",
        () -> TestRedis.cmd("HGET", node.keys.stateH(waiting), "processingState").toString(), "sleeping"::equals);
    String path = "/api/v1/transactions/" + waiting;
    assertEquals(400, call("POST", path + "/pause", "k-acme", new JsonObject().put("why", "x")).status());
    assertEquals(400, call("POST", "/api/v1/transactions/tx-1/pause", "k-acme", null).status());
    assertEquals(404, call("POST", path + "/pause", "k-globex", null).status(), "another owner's");
    assertEquals(409, call("POST", path + "/resume", "k-acme", null).status(), "not paused");
    Reply paused = call("POST", path + "/pause", "k-acme", new JsonObject().put("reason", "audit"));
    assertEquals(200, paused.status(), paused.body().encode());
    assertEquals("acme", paused.body().getJsonObject("paused").getString("by"));
    assertEquals(200, call("POST", path + "/pause", "k-acme", null).status(), "again: idempotent");
    Reply found = call("GET", "/api/v1/transactions?status=paused", "k-acme", null);
    assertEquals(waiting, found.body().getJsonArray("transactions").getJsonObject(0).getString("txId"));
    assertEquals(400, call("POST", "/api/v1/transactions/resume?statu=paused", "k-acme", null).status());
    Reply bulk = call("POST", "/api/v1/transactions/resume?pipeline=approval", "k-acme",
        new JsonObject().put("timers", "skip"));
    assertEquals(1, bulk.body().getInteger("resumed"), bulk.body().encode());
    Reply admin = call("POST", "/api/v1/admin/transactions/" + waiting + "/pause", "k-ops", null);
    assertEquals("ops", admin.body().getJsonObject("paused").getString("by"));
    assertEquals(403, call("POST", "/api/v1/admin/transactions/pause", "k-acme", null).status());
    Reply all = call("POST", "/api/v1/admin/transactions/resume?owner=acme", "k-ops", null);
    assertEquals(1, all.body().getInteger("resumed"), all.body().encode());
    assertEquals(200, call("PUT", path + "/switches/approve", "k-acme", new JsonObject().put("value", 1)).status());
    assertEquals("success", call("GET", path + "?wait=10", "k-acme", null).body().getString("status"));
    assertEquals(409, call("POST", path + "/pause", "k-acme", null).status(), "ended");
  }

  @Test
  void an_operator_runs_every_failed_transaction_of_a_pipeline_in_a_time_range_again() {
    String since = java.time.Instant.now().minusSeconds(60).toString();
    List<String> failed = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      String id = call("POST", "/api/v1/transactions", i == 2 ? "k-globex" : "k-acme",
          new JsonObject().put("type", "fragile")).body().getString("txId");
      failed.add(id);
      assertEquals("failed", node.awaitFinal(id).status().wire());
    }
    String fine = call("POST", "/api/v1/transactions?wait=10", "k-acme", new JsonObject().put("type", "order"))
        .body().getString("txId");

    assertEquals(403, call("POST", "/api/v1/admin/pipelines/fragile/retry?since=" + since, "k-acme", null).status());
    Reply noSince = call("POST", "/api/v1/admin/pipelines/fragile/retry", "k-ops", null);
    assertEquals(400, noSince.status());
    assertEquals("since", noSince.body().getString("field"));
    steps.broken.set(false);
    Reply bulk = call("POST", "/api/v1/admin/pipelines/fragile/retry?since=" + since, "k-ops", null);
    assertEquals(200, bulk.status(), bulk.body().encode());
    assertEquals(3, bulk.body().getInteger("matched"));
    assertEquals(3, bulk.body().getInteger("retried"));
    for (String id : failed) {
      assertEquals("success", node.awaitFinal(id).status().wire(), id);
    }
    assertEquals("success", node.awaitFinal(fine).status().wire());
    assertEquals(3, steps.recorded.size(), "the step before the broken one did not run again");
    Reply none = call("POST", "/api/v1/admin/pipelines/fragile/retry?since=" + since, "k-ops", null);
    assertEquals(0, none.body().getInteger("matched"), "nothing failed is left");
  }

  @Test
  void a_disabled_pipeline_refuses_starts_and_one_with_live_transactions_is_deleted_only_once_they_end()
      throws Exception {
    assertEquals(404, call("POST", "/api/v1/pipelines/nope/disable", "k-ops", null).status());
    assertEquals(403, call("POST", "/api/v1/pipelines/order/disable", "k-acme", null).status());
    assertEquals(true, call("POST", "/api/v1/pipelines/order/disable", "k-ops", null).body().getBoolean("disabled"));
    Reply refused = call("POST", "/api/v1/transactions", "k-acme", new JsonObject().put("type", "order"));
    assertEquals(409, refused.status());
    assertEquals("pipeline-disabled", refused.body().getString("type"));
    assertTrue(refused.body().getString("detail").contains("pipeline order is disabled"), refused.body().encode());
    assertEquals(true, call("GET", "/api/v1/pipelines/order", "k-ops", null).body().getBoolean("disabled"));
    call("POST", "/api/v1/pipelines/order/enable", "k-ops", null);
    assertEquals(200, call("POST", "/api/v1/transactions?wait=10", "k-acme", new JsonObject().put("type", "order"))
        .status());

    String live = call("POST", "/api/v1/transactions", "k-acme", new JsonObject().put("type", "held")).body()
        .getString("txId");
    var step = steps.held.poll(10, TimeUnit.SECONDS);
    Reply inUse = call("DELETE", "/api/v1/pipelines/held", "k-ops", null);
    assertEquals(409, inUse.status());
    assertEquals("pipeline-in-use", inUse.body().getString("type"));
    assertTrue(inUse.body().getString("detail").contains("has 1 live transactions"), inUse.body().encode());
    assertEquals(409, call("POST", "/api/v1/transactions", "k-acme", new JsonObject().put("type", "held")).status(),
        "disabled by the delete that was refused");
    step.complete(io.conveyor.pipeline.StepResult.success(new JsonObject()));
    assertEquals("success", node.awaitFinal(live).status().wire(), "what ran finishes");
    assertEquals(200, call("DELETE", "/api/v1/pipelines/held", "k-ops", null).status());
    assertEquals(404, call("GET", "/api/v1/pipelines/held", "k-ops", null).status());
    assertEquals("unknown-type", call("POST", "/api/v1/transactions", "k-acme",
        new JsonObject().put("type", "held")).body().getString("type"));
  }

  @Test
  void health_needs_no_key() {
    assertEquals(200, call("GET", "/health/live", null, null).status());
    // the ready check reads the script cache, which is server-wide: no other test JVM flushes it meanwhile
    try (var flushing = io.conveyor.testing.CrossJvmLock.hold("script-flush")) {
      Reply ready = call("GET", "/health/ready", null, null);
      assertEquals(200, ready.status());
      JsonObject body = ready.body().copy();
      // partitions: "ok", or a partition listed as suspect (one call out past redis.partitionSuspectAfter on a
      // loaded machine), which changes no status; never a failing one here
      Object partitions = body.remove("partitions");
      assertTrue("ok".equals(partitions) || partitions instanceof JsonObject p && p.getJsonArray("failing").stream()
          .allMatch(f -> "suspect".equals(((JsonObject) f).getString("state"))), String.valueOf(partitions));
      assertEquals(new JsonObject().put("status", "ready").put("redis", "ok").put("redisMemory", "ok").put("scripts", "ok").put("cluster", "ok")
          .put("archive", "ok").put("pipelines", "ok"), body);
      if (!TestRedis.clusterMode()) {
        // a Redis that lost its scripts (a restart): the check loads them and the node stays ready (it answered
        // 503 "ok (27 loaded again)" on that probe before; a cluster's keyless SCRIPT reaches any one server)
        TestRedis.cmd("SCRIPT", "FLUSH");
        Reply reloaded = call("GET", "/health/ready", null, null);
        assertEquals(200, reloaded.status(), reloaded.body().encode());
        assertEquals(1, TestRedis.cmd("SCRIPT", "EXISTS", node.node().redis().scripts().sent(node.node().redis().scripts().rerun).sha()).get(0).toInteger());
      }
    }
    TestRedis.cmd("SREM", node.keys.pipelinesS(), "order");
    Reply notReady = call("GET", "/health/ready", null, null);
    assertEquals(503, notReady.status());
    assertEquals("not uploaded: [order]", notReady.body().getString("pipelines"));
  }

  @Test
  void an_admin_uploads_a_pipeline_a_client_starts_it_and_the_admin_sees_the_cluster() {
    JsonObject pipeline = new JsonObject().put("name", "greet").put("nodeGroup", "master").put("transactionType", true)
        .put("steps", new io.vertx.core.json.JsonArray().add(new JsonObject().put("type", "util/fixed-reply")
            .put("params", new JsonObject().put("reply", new JsonObject().put("hi", 1)))));
    assertEquals(403, call("PUT", "/api/v1/pipelines/greet", "k-acme", pipeline).status());
    Reply uploaded = call("PUT", "/api/v1/pipelines/greet", "k-ops", pipeline);
    assertEquals(200, uploaded.status());
    assertEquals(16, uploaded.body().getString("version").length());
    Reply bad = call("PUT", "/api/v1/pipelines/greet", "k-ops", pipeline.copy().put("steps",
        new io.vertx.core.json.JsonArray().add(new JsonObject().put("type", "util/delay"))));
    assertEquals(400, bad.status());
    assertTrue(bad.body().getString("detail").contains("step 1 (util/delay)"), bad.body().encode());
    assertEquals(400, call("PUT", "/api/v1/pipelines/other", "k-ops", pipeline).status());
    assertEquals(uploaded.body().getString("version"), call("GET", "/api/v1/pipelines", "k-ops", null).body()
        .getJsonObject("greet").getString("version"));

    Reply run = call("POST", "/api/v1/transactions?wait=10", "k-acme", new JsonObject().put("type", "greet"));
    assertEquals(new JsonObject().put("hi", 1), run.body().getJsonObject("output"));

    assertEquals(403, call("GET", "/api/v1/cluster", "k-acme", null).status());
    JsonObject cluster = call("GET", "/api/v1/cluster", "k-ops", null).body();
    assertTrue(cluster.getJsonObject("nodes").containsKey(node.node().nodeId()), cluster.encode());
    assertEquals(0L, cluster.getJsonObject("queues").getJsonObject("master").getLong("in"));
    assertEquals("running", cluster.getJsonObject("queues").getJsonObject("master").getString("state"));
    assertEquals(1L, cluster.getJsonObject("queues").getJsonObject("master").getLong("nodes"));
    assertEquals(0L, cluster.getJsonObject("queues").getJsonObject("master").getLong("waiting"));
    assertEquals(0L, cluster.getJsonObject("queues").getJsonObject("master").getLong("held"));

    // a pipeline for a group no live node serves: accepted, with a warning; the cluster view shows the group
    Reply elsewhere = call("PUT", "/api/v1/pipelines/far", "k-ops", pipeline.copy().put("name", "far")
        .put("nodeGroup", "nobody"));
    assertEquals(200, elsewhere.status());
    assertTrue(elsewhere.body().getString("warning").contains("no live node serves group nobody"),
        elsewhere.body().encode());
    assertEquals(null, uploaded.body().getString("warning"));
    Reply orphan = call("PUT", "/api/v1/pipelines/caller", "k-ops", pipeline.copy().put("name", "caller")
        .put("steps", new io.vertx.core.json.JsonArray().add(new JsonObject().put("type", "util/child-pipeline")
            .put("params", new JsonObject().put("pipeline", "ghost")))));
    assertEquals(200, orphan.status());
    assertTrue(orphan.body().getString("warning").contains("names pipelines not published yet: ghost"),
        orphan.body().encode());
    // ghost closes a cycle caller → ghost → caller: accepted, and the warning names it
    Reply cycle = call("PUT", "/api/v1/pipelines/ghost", "k-ops", pipeline.copy().put("name", "ghost")
        .put("steps", new io.vertx.core.json.JsonArray().add(new JsonObject().put("type", "util/child-pipeline")
            .put("params", new JsonObject().put("pipeline", "caller")))));
    assertEquals(200, cycle.status());
    assertTrue(cycle.body().getString("warning").contains("its child pipelines form a cycle: ghost → caller → ghost"),
        cycle.body().encode());
    assertEquals(0L, call("GET", "/api/v1/cluster", "k-ops", null).body().getJsonObject("queues")
        .getJsonObject("nobody").getLong("nodes"));

    // pause, drain and resume a group through the API
    assertEquals("paused", call("POST", "/api/v1/admin/groups/master/pause", "k-ops", null).body().getString("state"));
    JsonObject drain = call("POST", "/api/v1/admin/groups/master/drain?wait=5", "k-ops", null).body();
    assertEquals("draining", drain.getString("state"));
    assertEquals(true, drain.getBoolean("drained"));
    assertEquals(400, call("POST", "/api/v1/admin/groups/master/drain?wait=soon", "k-ops", null).status());
    assertEquals(403, call("POST", "/api/v1/admin/groups/master/resume", "k-acme", null).status());
    assertEquals("running", call("POST", "/api/v1/admin/groups/master/resume", "k-ops", null).body()
        .getString("state"));
    // an owner's limits through the API
    JsonObject limits = new JsonObject().put("weight", 4).put("maxConcurrency", 20).put("rateLimit", "30/m");
    assertEquals(403, call("PUT", "/api/v1/admin/owners/acme", "k-acme", limits).status());
    JsonObject set = call("PUT", "/api/v1/admin/owners/acme", "k-ops", limits).body();
    assertEquals(4, set.getInteger("weight"));
    assertEquals("api", set.getString("weightFrom"));
    assertEquals("30/m", set.getString("rateLimit"));
    assertEquals(set, call("GET", "/api/v1/admin/owners/acme", "k-ops", null).body());
    assertEquals(new JsonArray().add(set), call("GET", "/api/v1/admin/owners", "k-ops", null).body()
        .getJsonArray("owners"));
    Reply badRate = call("PUT", "/api/v1/admin/owners/acme", "k-ops", limits.copy().put("rateLimit", "fast"));
    assertEquals(400, badRate.status());
    assertTrue(badRate.body().getString("detail", badRate.body().encode()).contains("rateLimit"), badRate.body().encode());
    Reply unknown = call("PUT", "/api/v1/admin/owners/acme", "k-ops", limits.copy().put("weigth", 2));
    assertEquals(400, unknown.status());
    assertTrue(unknown.body().encode().contains("did you mean weight"), unknown.body().encode());
    assertEquals(400, call("PUT", "/api/v1/admin/owners/-bad", "k-ops", limits).status());
    assertEquals(set, call("GET", "/api/v1/admin/owners/acme", "k-ops", null).body(), "refusals left it as it was");
    JsonObject cleared = call("DELETE", "/api/v1/admin/owners/acme", "k-ops", null).body();
    assertEquals("default", cleared.getString("weightFrom"));
    assertEquals(null, cleared.getValue("maxConcurrency"));
    assertEquals(0, call("GET", "/api/v1/admin/owners", "k-ops", null).body().getJsonArray("owners").size());
    assertEquals(node.node().nodeId(), cluster.getJsonObject("leaders").getString("reaper"));
    io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "the archive, webhook and scheduler leases",
        () -> call("GET", "/api/v1/cluster", "k-ops", null).body().getJsonObject("leaders"),
        l -> node.node().nodeId().equals(l.getString("archive")) && node.node().nodeId().equals(l.getString("webhooks"))
            && node.node().nodeId().equals(l.getString("scheduler")));
    assertEquals(403, call("POST", "/api/v1/transactions", "k-ops", order()).status());
  }

  @Test
  void a_long_poll_on_one_node_is_answered_by_a_completion_on_another() throws Exception {
    // a second node of the same system that runs the work; this test's node only serves the API
    node.close();
    node = withHttp().set("NODE_ROLES", "api")
        .set("API_KEYS", "acme:client:k-acme")
        .pipeline("held", "{'name':'held','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/hold'}]}")
        .start(steps.registry());
    try (TestNode worker = node.sibling().set("NODE_ROLES", "dequeue").set("HTTP_PORT", "0")
        .start(steps.registry())) {
      String txId = call("POST", "/api/v1/transactions", "k-acme", new JsonObject().put("type", "held"))
          .body().getString("txId");
      var held = steps.held.poll(10, TimeUnit.SECONDS);
      CompletableFuture<Reply> poll = CompletableFuture.supplyAsync(() ->
          call("GET", "/api/v1/transactions/" + txId + "?wait=30", "k-acme", null));
      held.complete(StepResult.success(new JsonObject().put("by", "worker")));
      Reply r = poll.get(20, TimeUnit.SECONDS);
      assertEquals("success", r.body().getString("status"));
      assertEquals(worker.node().nodeId(), TestRedis.cmd("HGET", node.keys.stateH(txId), "node").toString());
      // a poll with a deadline on a transaction that never ends answers at the deadline, still running
      String stuck = call("POST", "/api/v1/transactions", "k-acme", new JsonObject().put("type", "held"))
          .body().getString("txId");
      var stuckStep = steps.held.poll(10, TimeUnit.SECONDS);
      assertEquals("running", call("GET", "/api/v1/transactions/" + stuck + "?wait=1", "k-acme", null).body()
          .getString("status"));
      stuckStep.complete(StepResult.success(new JsonObject())); // lets the worker stop without draining
    }
  }

  @Test
  void the_admin_routes_list_show_wake_and_switch_any_owners_transaction_and_refuse_clients() {
    String txId = call("POST", "/api/v1/transactions", "k-acme", new JsonObject().put("type", "approval")
        .put("input", new JsonObject())).body().getString("txId");
    io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "it to sleep", () -> call("GET",
        "/api/v1/admin/transactions?list=sleeping", "k-ops", null).body().getJsonArray("transactions").stream()
        .anyMatch(t -> txId.equals(((JsonObject) t).getString("txId"))), b -> b);
    assertEquals(403, call("GET", "/api/v1/admin/transactions?list=sleeping", "k-acme", null).status());
    assertEquals(400, call("GET", "/api/v1/admin/transactions?list=nonsense", "k-ops", null).status());
    JsonObject detail = call("GET", "/api/v1/admin/transactions/" + txId, "k-ops", null).body();
    assertEquals("acme", detail.getJsonObject("summary").getString("owner"));
    assertEquals("current", detail.getJsonArray("steps").getJsonObject(0).getString("state"));
    assertEquals(404, call("GET", "/api/v1/admin/transactions/" + io.conveyor.model.Ids.txId(), "k-ops", null)
        .status());

    // wake: the reaper leader queues it again, and the step runs again (a higher attempt)
    assertEquals(200, call("POST", "/api/v1/admin/transactions/" + txId + "/wake", "k-ops", null).status());
    io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "the wait to run again", () -> Long.parseLong(
        String.valueOf(TestRedis.cmd("HGET", node.keys.stateH(txId), "attempt"))), a -> a >= 2);
    // an admin sets the switch on another of acme's transactions waiting for it: it ends
    String other = call("POST", "/api/v1/transactions", "k-acme", new JsonObject().put("type", "approval")
        .put("input", new JsonObject())).body().getString("txId");
    io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "it to sleep",
        () -> String.valueOf(TestRedis.cmd("HGET", node.keys.stateH(other), "processingState")), "sleeping"::equals);
    assertEquals(200, call("PUT", "/api/v1/admin/transactions/" + other + "/switches/approve", "k-ops",
        new JsonObject().put("value", "yes")).status());
    JsonObject done = io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "it to end", () -> call(
        "GET", "/api/v1/transactions/" + other, "k-acme", null).body(), b -> "success".equals(b.getString("status")));
    assertEquals("success", done.getString("status"));
    assertEquals(409, call("POST", "/api/v1/admin/transactions/" + other + "/wake", "k-ops", null).status());
    assertEquals(409, call("POST", "/api/v1/admin/transactions/" + other + "/cancel", "k-ops", null).status());
  }

  @Test
  void an_unexpected_failure_is_a_500_problem_whose_error_id_names_one_error_log_line() {
    // a state no script can read: Redis answers WRONGTYPE inside get-state, which is no outage but a bug
    String txId = "tx-" + "0".repeat(31) + "1";
    TestRedis.cmd("SET", node.keys.stateH(txId), "not a hash");
    ch.qos.logback.classic.Logger problems = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
        Problems.class);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged =
        new ch.qos.logback.core.read.ListAppender<>();
    logged.start();
    problems.addAppender(logged);
    try {
      Reply r = call("GET", "/api/v1/transactions/" + txId, "k-acme", null);
      assertEquals(500, r.status(), r.body().encode());
      assertEquals("application/problem+json", r.type());
      assertEquals("internal", r.body().getString("type"));
      String errorId = r.body().getString("errorId");
      assertTrue(errorId != null && errorId.matches("err-[0-9a-f]{16}"), r.body().encode());
      List<ch.qos.logback.classic.spi.ILoggingEvent> lines = logged.list.stream()
          .filter(e -> e.getFormattedMessage().contains(errorId)).toList();
      assertEquals(1, lines.size(), "one log line names " + errorId);
      assertEquals(ch.qos.logback.classic.Level.ERROR, lines.get(0).getLevel());
      assertTrue(lines.get(0).getThrowableProxy() != null, "the line carries the stack trace");
    } finally {
      problems.detachAppender(logged);
    }
  }

  @Test
  void an_admin_creates_reads_pauses_resumes_triggers_and_deletes_a_schedule() {
    JsonObject schedule = new JsonObject("{\"pipeline\":\"order\",\"owner\":\"acme\",\"cron\":\"0 7 * * MON-FRI\","
        + "\"timeZone\":\"Europe/Paris\",\"input\":{\"n\":1}}");
    assertEquals(403, call("PUT", "/api/v1/admin/schedules/daily", "k-acme", schedule).status());
    Reply put = call("PUT", "/api/v1/admin/schedules/daily", "k-ops", schedule);
    assertEquals(200, put.status(), put.body().encode());
    assertEquals(5, put.body().getJsonArray("nextFires").size());
    assertEquals("skip", put.body().getJsonObject("definition").getString("overlap"), "the default overlap");
    Reply bad = call("PUT", "/api/v1/admin/schedules/daily", "k-ops", schedule.copy().put("cron", "every day"));
    assertEquals(400, bad.status());
    assertTrue(bad.body().getString("detail").contains("cron: every day is not a cron expression"),
        bad.body().encode());
    Reply unknown = call("PUT", "/api/v1/admin/schedules/daily", "k-ops", schedule.copy().put("overlpa", "skip"));
    assertEquals(400, unknown.status());
    assertTrue(unknown.body().getString("detail").contains("unknown field 'overlpa'"), unknown.body().encode());
    assertEquals(1, call("GET", "/api/v1/admin/schedules", "k-ops", null).body().getJsonArray("schedules").size());

    JsonObject paused = call("POST", "/api/v1/admin/schedules/daily/pause", "k-ops", null).body();
    assertEquals(true, paused.getBoolean("paused"));
    assertEquals("ops", paused.getString("pausedBy"));
    assertEquals(0, paused.getJsonArray("nextFires").size());
    assertEquals(false, call("POST", "/api/v1/admin/schedules/daily/resume", "k-ops", null).body()
        .getBoolean("paused"));

    JsonObject triggered = call("POST", "/api/v1/admin/schedules/daily/trigger", "k-ops", null).body();
    String txId = triggered.getString("triggered");
    assertEquals("success", node.awaitFinal(txId).status().wire());
    JsonObject read = call("GET", "/api/v1/admin/schedules/daily", "k-ops", null).body();
    assertEquals(txId, read.getJsonObject("lastRun").getString("txId"));
    assertEquals("success", read.getJsonObject("lastRun").getString("status"));
    assertEquals(1L, read.getLong("fires"));

    assertEquals(true, call("DELETE", "/api/v1/admin/schedules/daily", "k-ops", null).body().getBoolean("deleted"));
    assertEquals(404, call("GET", "/api/v1/admin/schedules/daily", "k-ops", null).status());
    assertEquals(404, call("POST", "/api/v1/admin/schedules/daily/pause", "k-ops", null).status());
    assertEquals(400, call("GET", "/api/v1/admin/schedules/bad%20id", "k-ops", null).status());
  }

  @Test
  void gates_answer_200_debounced_429_throttled_with_retry_after_and_409_gate_busy_naming_the_live_one() {
    JsonObject debounce = new JsonObject().put("key", "${input.doc}").put("period", "1h");
    JsonObject first = order().put("input", new JsonObject().put("doc", "d-1")).put("debounce", debounce);
    Reply opened = call("POST", "/api/v1/transactions", "k-acme", first);
    assertEquals(202, opened.status());
    assertEquals("delayed", opened.body().getJsonObject("gate").getString("outcome"));
    Reply folded = call("POST", "/api/v1/transactions", "k-acme", first.copy().put("input",
        new JsonObject().put("doc", "d-1").put("v", 2)));
    assertEquals(200, folded.status());
    assertEquals(opened.body().getString("txId"), folded.body().getString("txId"));
    assertEquals(true, folded.body().getBoolean("debounced"));
    JsonObject throttle = new JsonObject().put("key", "${input.k}").put("limit", 1).put("period", "1m")
        .put("onLimit", "refuse");
    // held, not order: a gated start is read back, and an order may have ended by then (200, not 202)
    JsonObject limited = new JsonObject().put("type", "held").put("input", new JsonObject().put("k", "x"))
        .put("throttle", throttle);
    assertEquals(202, call("POST", "/api/v1/transactions", "k-acme", limited).status());
    Reply refused = call("POST", "/api/v1/transactions", "k-acme", limited);
    assertEquals(429, refused.status());
    assertEquals("throttled", refused.body().getString("type"));
    assertEquals("60", refused.retryAfter());
    JsonObject singleton = new JsonObject().put("key", "${input.k}").put("onBusy", "refuse");
    JsonObject held = new JsonObject().put("type", "held").put("input", new JsonObject().put("k", "s"))
        .put("singleton", singleton);
    Reply live = call("POST", "/api/v1/transactions", "k-acme", held);
    assertEquals(202, live.status());
    Reply busy = call("POST", "/api/v1/transactions", "k-acme", held);
    assertEquals(409, busy.status());
    assertEquals("gate-busy", busy.body().getString("type"));
    assertEquals(live.body().getString("txId"), busy.body().getString("txId"));
    Reply bad = call("POST", "/api/v1/transactions", "k-acme", order().put("throttle", throttle.copy().put("limit", 0)));
    assertEquals(400, bad.status());
    assertEquals("throttle.limit", bad.body().getString("field"));
  }

  @Test
  void a_misspelt_field_or_query_parameter_is_refused_naming_it_and_nothing_starts() {
    long before = TestRedis.keys(node.prefix + "stateH:").size();
    Reply typo = call("POST", "/api/v1/transactions", "k-acme", order().put("inxut", new JsonObject()));
    assertEquals(400, typo.status());
    assertEquals("inxut", typo.body().getString("field"));
    assertTrue(typo.body().getString("detail").contains("unknown field (did you mean input?); accepted: debounce, delay, "
        + "externalId, input, metadata"), typo.body().getString("detail"));
    assertEquals(400, call("POST", "/api/v1/transactions", "k-acme", order().put("__proto__", 1)).status());
    Reply wait = call("POST", "/api/v1/transactions?wait=abc", "k-acme", order());
    assertEquals(400, wait.status());
    assertEquals("wait", wait.body().getString("field"));
    assertEquals(before, TestRedis.keys(node.prefix + "stateH:").size(), "nothing started");
    String txId = call("POST", "/api/v1/transactions", "k-acme", order()).body().getString("txId");
    assertEquals(400, call("GET", "/api/v1/transactions/" + txId + "?wait=-1", "k-acme", null).status());
    Reply sw = call("PUT", "/api/v1/transactions/" + txId + "/switches/go", "k-acme", new JsonObject().put("valeu", 1));
    assertEquals(400, sw.status());
    assertTrue(sw.body().getString("detail").contains("did you mean value?"), sw.body().encode());
  }
}
