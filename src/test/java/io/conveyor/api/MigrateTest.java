package io.conveyor.api;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepResult;
import io.conveyor.pipeline.StepType;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Moving live transactions to another version of their pipeline (issue 34, POST
 * /api/v1/admin/pipelines/{name}/migrate): sleepers, switch waiters, retries, delayed starts and a running one on v1
 * move to v2 whose step 2 is fixed, each goes on at the mapped step with its input and ends as v2 says, no step
 * runs twice; an undo moves back those still where the move put them; bad input is refused naming the field.
 */
class MigrateTest {
  /** v1: step 2 (test/mode) sleeps, waits, fails or holds as the input says; v2 fixes it; the last step says which. */
  static final String V1 = "{'name':'mig','nodeGroup':'master','transactionType':true,"
      + "'retry':{'maxAttempts':5,'initialInterval':'1h'},'steps':[{'type':'test/record'},{'type':'test/mode'},"
      + "{'type':'test/record'},{'type':'util/fixed-reply','params':{'reply':{'v':1}}}]}";
  static final JsonObject V2 = new JsonObject(V1.replace('\'', '"').replace("{\"type\":\"test/mode\"}",
      "{\"type\":\"test/mode\",\"params\":{\"fixed\":true}}").replace("{\"v\":1}", "{\"v\":2}"));

  private final TestSteps steps = new TestSteps();
  private final LinkedBlockingQueue<Promise<StepResult>> held = new LinkedBlockingQueue<>();
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private final HttpClient http = HttpClient.newHttpClient();
  private TestNode node;
  private String base;

  @BeforeEach
  void startNode() {
    int port = TestRedis.freePort();
    base = "http://127.0.0.1:" + port;
    node = new TestNode().clock(clock).set("REAPER_INTERVAL", "20ms").set("NODE_IDLE_WAIT", "200ms")
        .set("HTTP_PORT", Integer.toString(port)).set("API_KEYS", "acme:client:k-acme,ops:admin:k-ops")
        .pipeline("mig", V1)
        .pipeline("kid", "{'name':'kid','nodeGroup':'master','steps':[{'type':'util/delay','params':{'duration':'1h'}}]}")
        .start(steps.registry().register(mode(held)));
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  /** test/mode: with params fixed, passes its input on; else as input.mode says: sleep, wait (switch go), fail, hold. */
  static StepType mode(LinkedBlockingQueue<Promise<StepResult>> held) {
    return new StepType() {
      @Override
      public String name() {
        return "test/mode";
      }

      @Override
      public Step create(JsonObject params) {
        return ctx -> {
          if (params.getBoolean("fixed", false)) {
            return Future.succeededFuture(StepResult.success(ctx.input().copy().put("fixed", true)));
          }
          switch (ctx.input().getString("mode", "")) {
            case "sleep":
              return Future.succeededFuture(ctx.retry() == 0 ? new StepResult.Sleep(Duration.ofHours(1), null)
                  : StepResult.success(ctx.input()));
            case "wait":
              return Future.succeededFuture(ctx.switches().containsKey("go") ? StepResult.success(ctx.input())
                  : new StepResult.Sleep(Duration.ofDays(1), "go"));
            case "fail":
              return Future.succeededFuture(StepResult.failed("step 2 of v1 is broken"));
            case "child":
              return Future.succeededFuture(new StepResult.Child("kid", ctx.input()));
            case "hold":
              Promise<StepResult> p = Promise.promise();
              held.add(p);
              return p.future();
            default:
              return Future.succeededFuture(StepResult.success(ctx.input()));
          }
        };
      }
    };
  }

  private Promise<StepResult> nextHeld() throws InterruptedException {
    Promise<StepResult> p = held.poll(10, TimeUnit.SECONDS);
    assertNotNull(p, "no step was held within 10 s");
    return p;
  }

  private HttpResponse<String> send(String method, String path, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).header("Authorization", "Bearer k-ops")
        .header("Content-Type", "application/json");
    b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private JsonObject migrate(JsonObject body) throws Exception {
    HttpResponse<String> r = send("POST", "/api/v1/admin/pipelines/mig/migrate", body.encode());
    assertEquals(200, r.statusCode(), r.body());
    return new JsonObject(r.body());
  }

  private String v2() throws Exception {
    clock.advance(Duration.ofSeconds(10)); // later than the pipeline file's publication, so it becomes current
    HttpResponse<String> put = send("PUT", "/api/v1/pipelines/mig", V2.encode());
    assertEquals(200, put.statusCode(), put.body());
    return new JsonObject(put.body()).getString("version");
  }

  private String field(String txId, String name) {
    return node.stateField(txId, name);
  }

  private void until(String txId, String name, String value) {
    node.awaitField(txId, name, value);
  }

  private String start(String mode) {
    return node.start("mig", new JsonObject().put("mode", mode));
  }

  private Long wake(String txId) {
    Response r = cmd("ZSCORE", node.keys.sleepingZ(node.keys.partitionOf(txId)), txId);
    return r == null ? null : r.toLong();
  }

  /** How often test/record ran each step (from 1) of txId. */
  private Map<Integer, Long> records(String txId) {
    return steps.recorded.stream().filter(r -> r.getString("txId").equals(txId))
        .collect(Collectors.groupingBy(r -> r.getInteger("step") + 1, Collectors.counting()));
  }

  @Test
  void sleepers_waiters_retries_delayed_and_running_ones_move_to_v2_and_end_as_v2_says_running_no_step_twice()
      throws Exception {
    String sleeper = start("sleep");
    String waiter = start("wait");
    String retrying = start("fail");
    String delayed = node.transactions.start(new JsonObject().put("type", "mig").put("owner", "acme")
        .put("input", new JsonObject().put("mode", "pass")).put("delay", "1h")).await().txId();
    String running = start("hold");
    Promise<StepResult> runningStep = nextHeld();
    String parent = start("child");
    for (String txId : List.of(sleeper, waiter, retrying, parent)) {
      until(txId, "processingState", "sleeping");
    }
    assertNotNull(field(retrying, "retry"), "the third is retrying");
    String v1 = field(sleeper, "version");
    String v2 = v2();
    Map<String, Long> wakes = Map.of(sleeper, wake(sleeper), waiter, wake(waiter), retrying, wake(retrying),
        delayed, wake(delayed));

    HttpResponse<String> none = send("POST", "/api/v1/admin/pipelines/mig/migrate", null);
    assertEquals(200, none.statusCode(), "no body: every default, a dry run: " + none.body());
    JsonObject dry = migrate(new JsonObject());
    assertEquals(true, dry.getBoolean("dryRun"), "a dry run by default");
    assertEquals(new JsonArray().add(v1), dry.getJsonArray("from"));
    assertEquals(v2, dry.getString("to"), "to the current version by default");
    assertEquals(4L, dry.getLong("moved"), dry.encode());
    assertEquals(1L, dry.getLong("atBoundary"), "the running one moves at its next step boundary: " + dry.encode());
    assertEquals(new JsonObject().put("waiting-child", 1L), dry.getJsonObject("cannot"), "its step waits for a child");
    assertEquals(v1, field(sleeper, "version"), "a dry run writes nothing");
    assertNull(field(running, "migrateTo"));

    JsonObject applied = migrate(new JsonObject().put("dryRun", false));
    assertEquals(4L, applied.getLong("moved"), applied.encode());
    assertEquals(1L, applied.getLong("atBoundary"));
    for (String txId : List.of(sleeper, waiter, retrying, delayed)) {
      assertEquals(v2, field(txId, "version"), txId);
      assertEquals(wakes.get(txId), wake(txId), "its wake-up is kept: " + txId);
    }
    assertEquals("1", field(sleeper, "step"), "it stands at step 2 still, v2's now");
    JsonObject entry = new JsonObject(field(sleeper, "migrated"));
    assertEquals(v1, entry.getString("from"));
    assertEquals(2, entry.getInteger("toStep"));
    assertEquals("ops", entry.getString("by"));
    JsonArray history = new JsonObject(send("GET", "/api/v1/admin/transactions/" + sleeper, null).body())
        .getJsonArray("migrations");
    assertEquals(1, history.size(), "its history keeps the move: " + history.encode());
    assertEquals(v2, history.getJsonObject(0).getString("to"));
    JsonArray logged = new JsonObject(send("GET", "/api/v1/admin/events?kind=migrated", null).body())
        .getJsonArray("events");
    assertEquals(4L, logged.stream().mapToLong(e -> ((JsonObject) e).getJsonObject("details").getLong("moved")).sum(),
        "the migrated events (one per partition batch that moved any) count the 4 moved: " + logged.encode());
    assertEquals(v1, field(parent, "version"), "one waiting for its child stays");
    assertEquals(v1, field(running, "version"), "the running one runs its v1 step to its end");
    assertNotNull(field(running, "migrateTo"));

    runningStep.complete(StepResult.success(new JsonObject().put("mode", "hold").put("held", "done")));
    assertEquals(new JsonObject().put("v", 2), node.awaitFinal(running).output(), "moved at its boundary");
    assertEquals(v2, field(running, "version"));
    node.transactions.setSwitch(waiter, "acme", "go", true).await();
    clock.advance(Duration.ofHours(2));
    for (String txId : List.of(sleeper, waiter, retrying, delayed, running)) {
      TxSummary s = node.awaitFinal(txId);
      assertEquals(TxStatus.SUCCESS, s.status(), txId + " " + s.toJson().encode());
      assertEquals(new JsonObject().put("v", 2), s.output(), "it ended as v2 says: " + txId);
      assertEquals(Map.of(1, 1L, 3, 1L), records(txId), "each recording step ran once: " + txId);
    }
    assertEquals(new JsonObject().put("v", 1), node.awaitFinal(parent).output(), "the parent ended as v1 says");
    assertEquals(Map.of(1, 1L, 3, 1L), records(parent));
    assertEquals(new JsonObject().put("mode", "hold").put("held", "done"),
        steps.recorded.stream().filter(r -> r.getString("txId").equals(running) && r.getInteger("step") == 2)
            .findFirst().orElseThrow().getJsonObject("input"), "the running one went on with its step's result");
  }

  @Test
  void an_undo_moves_back_those_still_where_the_move_put_them_and_names_why_the_others_cannot() throws Exception {
    String stays = start("sleep");
    String movesOn = start("sleep");
    String running = start("hold");
    Promise<StepResult> runningStep = nextHeld();
    until(stays, "processingState", "sleeping");
    until(movesOn, "processingState", "sleeping");
    String v1 = field(stays, "version");
    String v2 = v2();
    JsonObject applied = migrate(new JsonObject().put("dryRun", false));
    assertEquals(2L, applied.getLong("moved"));
    assertEquals(1L, applied.getLong("atBoundary"));
    cmd("HSET", node.keys.stateH(movesOn), "step", "2"); // arranged: it went on to step 3 meanwhile

    JsonObject undo = migrate(new JsonObject().put("undo", true).put("dryRun", false));
    assertEquals(2L, undo.getLong("undone"), "the one moved back and the running one's mark: " + undo.encode());
    assertNull(field(running, "migrateTo"), "the mark not reached yet is gone");
    runningStep.complete(StepResult.success(new JsonObject()));
    assertEquals(new JsonObject().put("v", 1), node.awaitFinal(running).output(), "it ran on as v1 says");
    assertEquals(new JsonObject().put("moved-on", 1L), undo.getJsonObject("cannot"));
    assertEquals(v1, field(stays, "version"));
    assertEquals("1", field(stays, "step"));
    assertNull(field(stays, "migrated"), "nothing left to undo");
    assertEquals(2, new JsonArray(field(stays, "migrations")).size(), "the history keeps the move and its undo");
    assertEquals(v2, field(movesOn, "version"));
    assertEquals(0L, migrate(new JsonObject().put("undo", true).put("dryRun", false)).getLong("undone"),
        "an undo again finds nothing more");
  }

  @Test
  void bad_input_is_refused_naming_the_field_and_nothing_moves() throws Exception {
    String sleeper = start("sleep");
    until(sleeper, "processingState", "sleeping");
    String v1 = field(sleeper, "version");
    String v2 = v2();
    JsonObject longer = V2.copy();
    longer.getJsonArray("steps").add(new JsonObject().put("type", "test/record"));
    clock.advance(Duration.ofSeconds(10));
    assertEquals(200, send("PUT", "/api/v1/pipelines/mig", longer.encode()).statusCode());
    Map<String, String> refusals = Map.of(
        "{\"dryrun\":false}", "dryrun",
        "{\"to\":\"00ff\"}", "to",
        "{\"to\":\"" + v2 + "\",\"from\":[\"abc\"]}", "from",
        "{\"to\":\"" + v2 + "\",\"from\":[\"" + v2 + "\"]}", "from",
        "{\"to\":\"" + v2 + "\",\"stepMap\":{\"9\":1}}", "stepMap",
        "{\"to\":\"" + v2 + "\",\"stepMap\":{\"2\":7}}", "stepMap",
        "{\"from\":[\"" + v1 + "\"]}", "stepMap",
        "{\"dryRun\":\"no\"}", "dryRun",
        "{\"undo\":true,\"from\":[\"" + v1 + "\"]}", "from");
    for (Map.Entry<String, String> e : refusals.entrySet()) {
      HttpResponse<String> r = send("POST", "/api/v1/admin/pipelines/mig/migrate", e.getKey());
      assertEquals(400, r.statusCode(), e.getKey() + ": " + r.body());
      assertEquals(e.getValue(), new JsonObject(r.body()).getString("field"), e.getKey() + ": " + r.body());
    }
    HttpResponse<String> none = send("POST", "/api/v1/admin/pipelines/nope/migrate", "{}");
    assertEquals(404, none.statusCode(), none.body());
    HttpResponse<String> client = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(base
            + "/api/v1/admin/pipelines/mig/migrate")).header("Authorization", "Bearer k-acme")
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(403, client.statusCode(), "an admin route");
    assertEquals(v1, field(sleeper, "version"), "nothing moved");

    JsonObject shaped = migrate(new JsonObject().put("from", new JsonArray().add(v1)).put("stepMap",
        new JsonObject().put("2", 2)).put("dryRun", false));
    assertEquals(1L, shaped.getLong("moved"), "a stepMap makes shapes that differ movable: " + shaped.encode());
    assertTrue(shaped.getJsonObject("stepMap").getJsonObject(v1).containsKey("1"));
    assertNull(shaped.getJsonObject("stepMap").getJsonObject(v1).getValue("1"), "step 1 not named: not mapped");
  }
}
