package io.conveyor.domain;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxException;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepRegistry;
import io.conveyor.pipeline.StepResult;
import io.conveyor.pipeline.StepType;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Debounce, throttle and singleton at start (issue 33) on real nodes and Redis (one Redis, or three partitions on
 * the cluster pass): decided in start.lua, released by the scripts that end a transaction.
 */
class GateTest {
  private final TestSteps steps = new TestSteps();
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  /** test/count: runs now per key (input.key), the most ever at once per key, and each run's clock time. */
  private final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
  private final Map<String, Integer> most = new ConcurrentHashMap<>();
  private final List<JsonObject> runs = new CopyOnWriteArrayList<>();
  private final List<TestNode> nodes = new ArrayList<>();

  private StepRegistry registry() {
    Step count = ctx -> {
      String key = ctx.input().getString("key");
      int now = running.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
      most.merge(key, now, Math::max);
      runs.add(new JsonObject().put("txId", ctx.txId()).put("key", key).put("at", clock.millis())
          .put("input", ctx.input()));
      // holds the run a moment, so runs that could overlap would
      Promise<StepResult> done = Promise.promise();
      ctx.vertx().setTimer(15, t -> {
        running.get(key).decrementAndGet();
        done.complete(StepResult.success(ctx.input()));
      });
      return done.future();
    };
    return steps.registry().register(new StepType() {
      @Override
      public String name() {
        return "test/count";
      }

      @Override
      public Step create(JsonObject params) {
        return count;
      }
    });
  }

  private TestNode node() {
    TestNode n = (nodes.isEmpty() ? new TestNode() : nodes.get(0).sibling()).clock(clock)
        .set("REAPER_INTERVAL", "50ms");
    if (nodes.isEmpty()) {
      n.pipeline("reindex", "{'name':'reindex','nodeGroup':'master','transactionType':true,"
              + "'debounce':{'key':'${input.docId}','period':'10s','maxWait':'15s'},'steps':[{'type':'test/count'}]}")
          .pipeline("sync", "{'name':'sync','nodeGroup':'master','transactionType':true,"
              + "'singleton':{'key':'${input.key}'},'steps':[{'type':'test/count'}]}")
          .pipeline("mail", "{'name':'mail','nodeGroup':'master','transactionType':true,"
              + "'throttle':{'key':'${input.key}','limit':2,'period':'10s'},'steps':[{'type':'test/count'}]}")
          .pipeline("plain", "{'name':'plain','nodeGroup':'master','transactionType':true,"
              + "'steps':[{'type':'test/count'}]}")
          .pipeline("slow", "{'name':'slow','nodeGroup':'master','transactionType':true,"
              + "'singleton':{'key':'${input.key}'},'steps':[{'type':'test/hold'},{'type':'test/count'}]}");
    }
    n.start(registry());
    nodes.add(n);
    return n;
  }

  @AfterEach
  void stop() {
    for (int i = nodes.size() - 1; i >= 0; i--) {
      nodes.get(i).close();
    }
  }

  private static JsonObject body(String type, String owner, JsonObject input) {
    return new JsonObject().put("type", type).put("owner", owner).put("input", input);
  }

  private static TxSummary start(TestNode n, JsonObject body) {
    return n.transactions.start(body).await();
  }

  @Test
  void ten_starts_of_one_key_within_the_period_run_once_with_the_last_input() {
    TestNode n = node();
    TxSummary first = start(n, body("reindex", "acme", new JsonObject().put("docId", "d-1").put("key", "d-1")
        .put("n", 1)));
    assertEquals("scheduled", first.processingState());
    assertEquals("debounce", first.gate().getString("kind"));
    assertEquals("d-1", first.gate().getString("key"));
    for (int i = 2; i <= 10; i++) {
      clock.advance(Duration.ofMillis(500));
      TxSummary again = start(n, body("reindex", "acme", new JsonObject().put("docId", "d-1").put("key", "d-1")
          .put("n", i)));
      assertEquals(first.txId(), again.txId());
      assertTrue(again.debounced());
      assertTrue(again.toJson().getBoolean("debounced"));
    }
    TxSummary pending = n.store.reads.getState(first.txId()).await();
    assertEquals(10, pending.gate().getInteger("starts"));
    assertEquals("scheduled", pending.processingState());
    assertEquals(0, runs.size());
    clock.advance(Duration.ofSeconds(10));
    TxSummary done = n.awaitFinal(first.txId());
    assertEquals(TxStatus.SUCCESS, done.status());
    assertEquals(1, runs.size());
    assertEquals(10, runs.get(0).getJsonObject("input").getInteger("n"));
    // once it has started, a start opens a new window
    TxSummary next = start(n, body("reindex", "acme", new JsonObject().put("docId", "d-1").put("key", "d-1")));
    assertTrue(!next.txId().equals(first.txId()) && !next.debounced());
  }

  @Test
  void debounce_moves_the_start_no_later_than_max_wait_after_the_first() {
    TestNode n = node();
    long t0 = clock.millis();
    TxSummary first = start(n, body("reindex", "acme", new JsonObject().put("docId", "d-2").put("key", "d-2")));
    assertEquals(t0 + 10_000, first.startAt().toEpochMilli());
    clock.advance(Duration.ofSeconds(8));
    start(n, body("reindex", "acme", new JsonObject().put("docId", "d-2").put("key", "d-2")));
    TxSummary moved = n.store.reads.getState(first.txId()).await();
    assertEquals(t0 + 15_000, moved.startAt().toEpochMilli()); // maxWait 15s from the first, not 8s + 10s
    assertEquals(t0 + 15_000, cmd("ZSCORE", n.keys.sleepingZ(n.keys.partitionOf(first.txId())), first.txId())
        .toLong());
  }

  @Test
  void a_singleton_runs_one_at_a_time_per_key_under_three_nodes_starting_at_once_and_runs_every_queued_start() {
    List<TestNode> three = List.of(node(), node(), node());
    List<Future<TxSummary>> started = new ArrayList<>();
    for (int round = 0; round < 4; round++) {
      for (TestNode n : three) {
        for (String key : List.of("a", "b")) {
          started.add(n.transactions.start(body("sync", "acme", new JsonObject().put("key", key).put("round", round))));
        }
      }
    }
    List<String> ids = new ArrayList<>();
    for (Future<TxSummary> f : started) {
      ids.add(f.await().txId());
    }
    for (String id : ids) {
      TxSummary done = three.get(0).awaitFinal(id, Duration.ofSeconds(30));
      assertEquals(TxStatus.SUCCESS, done.status());
      assertEquals("singleton", done.gate().getString("kind"));
    }
    assertEquals(24, runs.size());
    assertEquals(Map.of("a", 1, "b", 1), most);
  }

  @Test
  void a_throttle_starts_at_most_its_limit_per_period_under_three_nodes_and_queues_the_rest_to_free_slots() {
    List<TestNode> three = List.of(node(), node(), node());
    List<Future<TxSummary>> started = new ArrayList<>();
    for (int round = 0; round < 3; round++) {
      for (TestNode n : three) {
        started.add(n.transactions.start(body("mail", "acme", new JsonObject().put("key", "k"))));
      }
    }
    List<TxSummary> all = new ArrayList<>();
    for (Future<TxSummary> f : started) {
      all.add(f.await());
    }
    long t0 = clock.millis();
    List<Long> at = new ArrayList<>();
    for (TxSummary s : all) {
      at.add(s.startAt() == null ? t0 : s.startAt().toEpochMilli());
    }
    at.sort(Long::compare);
    assertEquals(List.of(t0, t0, t0 + 10_000, t0 + 10_000, t0 + 20_000, t0 + 20_000, t0 + 30_000, t0 + 30_000,
        t0 + 40_000), at);
    // time moves on a period at a time: each period runs what its slots hold, never more
    for (int period = 0; period < 5; period++) {
      int expected = Math.min(9, 2 * (period + 1));
      Eventually.until(Duration.ofSeconds(10), expected + " runs", runs::size, r -> r == expected);
      clock.advance(Duration.ofSeconds(10));
    }
    for (JsonObject r : runs) {
      long from = r.getLong("at");
      long within = runs.stream().filter(o -> o.getLong("at") >= from && o.getLong("at") < from + 10_000).count();
      assertTrue(within <= 2, "runs within a period from " + from + ": " + within);
    }
    for (TxSummary s : all) {
      assertEquals(TxStatus.SUCCESS, three.get(0).awaitFinal(s.txId()).status());
    }
  }

  @Test
  void a_refusing_throttle_answers_429_naming_the_key_and_when_a_slot_frees() {
    TestNode n = node();
    JsonObject gate = new JsonObject().put("key", "${input.key}").put("limit", 1).put("period", "30s")
        .put("onLimit", "refuse");
    start(n, body("plain", "acme", new JsonObject().put("key", "k1")).put("throttle", gate));
    TxException e = assertThrows(TxException.class, () -> start(n, body("plain", "acme",
        new JsonObject().put("key", "k1")).put("throttle", gate)));
    assertEquals(TxException.Kind.THROTTLED, e.kind());
    assertEquals(429, e.kind().status);
    assertEquals(30, e.retryAfter());
    assertTrue(e.getMessage().contains("key k1"), e.getMessage());
    // another key is not held back
    assertNotNull(start(n, body("plain", "acme", new JsonObject().put("key", "k2")).put("throttle", gate)).txId());
  }

  @Test
  void a_refusing_singleton_answers_409_naming_the_live_transaction_and_takes_starts_again_once_it_ended() {
    TestNode n = node();
    JsonObject gate = new JsonObject().put("key", "${input.key}").put("onBusy", "refuse");
    JsonObject hold = new JsonObject().put("key", "s1");
    TxSummary live = start(n, body("slow", "acme", hold).put("singleton", gate));
    var step = steps.nextHeld();
    TxException e = assertThrows(TxException.class, () -> start(n, body("slow", "acme", hold).put("singleton", gate)));
    assertEquals(TxException.Kind.GATE_BUSY, e.kind());
    assertEquals(409, e.kind().status);
    assertEquals(live.txId(), e.txId());
    assertTrue(e.getMessage().contains("key s1") && e.getMessage().contains(live.txId()), e.getMessage());
    step.complete(StepResult.success(hold));
    assertEquals(TxStatus.SUCCESS, n.awaitFinal(live.txId()).status());
    TxSummary after = start(n, body("slow", "acme", hold).put("singleton", gate));
    assertEquals("passed", after.gate().getString("outcome"));
    steps.nextHeld().complete(StepResult.success(hold));
    assertEquals(TxStatus.SUCCESS, n.awaitFinal(after.txId()).status());
  }

  @Test
  void a_second_owners_starts_with_the_same_key_value_are_not_gated_by_the_first_owners() {
    TestNode n = node();
    TxSummary acme = start(n, body("reindex", "acme", new JsonObject().put("docId", "d-9").put("key", "d-9")));
    TxSummary globex = start(n, body("reindex", "globex", new JsonObject().put("docId", "d-9").put("key", "d-9")));
    assertTrue(!globex.debounced() && !globex.txId().equals(acme.txId()));
    JsonObject refuse = new JsonObject().put("key", "${input.key}").put("onBusy", "refuse");
    start(n, body("plain", "acme", new JsonObject().put("key", "x")).put("singleton", refuse));
    TxSummary other = start(n, body("plain", "globex", new JsonObject().put("key", "x")).put("singleton", refuse));
    assertEquals("passed", other.gate().getString("outcome"));
  }

  @Test
  void a_cancelled_live_singleton_lets_the_next_queued_start_run_and_a_cancelled_waiter_leaves_the_line() {
    TestNode held = node();
    JsonObject in = new JsonObject().put("key", "c");
    TxSummary first = start(held, body("slow", "acme", in));
    TxSummary second = start(held, body("slow", "acme", in));
    TxSummary third = start(held, body("slow", "acme", in));
    assertEquals("pending", second.processingState());
    assertEquals(first.txId(), second.gate().getString("behind"));
    var step = steps.nextHeld();
    held.transactions.cancelTree(second.txId(), "acme").await(); // a waiter leaves the line
    step.complete(StepResult.success(in));
    assertEquals(TxStatus.SUCCESS, held.awaitFinal(first.txId()).status());
    assertEquals(TxStatus.CANCELLED, held.awaitFinal(second.txId()).status());
    steps.nextHeld().complete(new StepResult.Failed("it broke", null)); // the third runs once the first ended
    assertEquals(TxStatus.FAILED, held.awaitFinal(third.txId()).status());
    TxSummary fourth = start(held, body("slow", "acme", in));
    assertEquals("passed", fourth.gate().getString("outcome"));
    held.transactions.cancelTree(fourth.txId(), "acme").await();
  }

  @Test
  void a_gate_a_pipeline_gains_through_another_nodes_upload_holds_from_this_nodes_next_start() {
    TestNode n = node();
    String before = start(n, body("plain", "acme", new JsonObject().put("key", "u"))).txId(); // the catalog knows it
    assertEquals(TxStatus.SUCCESS, n.awaitFinal(before).status());
    var parser = n.node().catalog().parser();
    var gated = parser.parse(new JsonObject(("{'name':'plain','nodeGroup':'master','transactionType':true,"
        + "'singleton':{'key':'${input.key}','onBusy':'refuse'},'steps':[{'type':'test/hold'}]}").replace('\'', '"')),
        "upload");
    new io.conveyor.pipeline.PipelineCatalog(parser).publish(n.store.pipelines, gated, clock.millis() + 60_000)
        .await();
    TxSummary live = start(n, body("plain", "acme", new JsonObject().put("key", "u")));
    assertEquals("singleton", live.gate().getString("kind"));
    var step = steps.nextHeld();
    TxException e = assertThrows(TxException.class, () -> start(n, body("plain", "acme",
        new JsonObject().put("key", "u"))));
    assertEquals(TxException.Kind.GATE_BUSY, e.kind());
    step.complete(StepResult.success(new JsonObject()));
    assertEquals(TxStatus.SUCCESS, n.awaitFinal(live.txId()).status());
  }

  @Test
  void each_wrong_gate_field_is_refused_with_its_name_and_nothing_is_started() {
    TestNode n = node();
    JsonObject in = new JsonObject().put("docId", "d").put("key", "k");
    Map<String, JsonObject> wrong = Map.of(
        "debounce.period", new JsonObject().put("debounce", new JsonObject().put("key", "${input.key}")
            .put("period", "0s")),
        "debounce.key", new JsonObject().put("debounce", new JsonObject().put("key", "fixed").put("period", "1s")),
        "debounce.maxWait", new JsonObject().put("debounce", new JsonObject().put("key", "${input.key}")
            .put("period", "10s").put("maxWait", "5s")),
        "throttle.limit", new JsonObject().put("throttle", new JsonObject().put("key", "${input.key}")
            .put("period", "1s").put("limit", 0)),
        "throttle.onLimit", new JsonObject().put("throttle", new JsonObject().put("key", "${input.key}")
            .put("period", "1s").put("limit", 1).put("onLimit", "drop")),
        "singleton.onBusy", new JsonObject().put("singleton", new JsonObject().put("key", "${input.key}")
            .put("onBusy", "wait")),
        "singleton.every", new JsonObject().put("singleton", new JsonObject().put("key", "${input.key}")
            .put("every", "1s")),
        "singleton", new JsonObject().put("singleton", new JsonObject().put("key", "${input.key}"))
            .put("throttle", new JsonObject().put("key", "${input.key}").put("period", "1s").put("limit", 1)),
        "singleton.key", new JsonObject().put("singleton", new JsonObject().put("key", "${input.missing}")),
        "externalId", new JsonObject().put("singleton", new JsonObject().put("key", "${input.key}"))
            .put("externalId", "e-1"));
    for (Map.Entry<String, JsonObject> w : wrong.entrySet()) {
      JsonObject b = body("plain", "acme", in).mergeIn(w.getValue());
      TxException e = assertThrows(TxException.class, () -> start(n, b), w.getKey());
      assertEquals(TxException.Kind.INVALID_INPUT, e.kind(), w.getKey());
      assertEquals(w.getKey(), e.field(), e.getMessage());
    }
    assertEquals(0, n.total("ZCARD", n.keys::liveZ));
    var parser = n.node().catalog().parser();
    String file = "{'name':'p','nodeGroup':'master','transactionType':true,'steps':[{'type':'test/count'}],";
    for (String[] bad : new String[][] {
        {"'throttle':{'key':'${input.k}','limit':1,'period':'1s','onLimit':'later'}}", "throttle.onLimit"},
        {"'debounce':{'key':'${input.k}','period':'-1s'}}", "debounce.period"},
        {"'singleton':{'key':'${input.k}','onBusy':'refuse','limit':1}}", "singleton.limit"}}) {
      Exception e = assertThrows(Exception.class, () -> parser.parse(new JsonObject((file + bad[0])
          .replace('\'', '"')), "p.json"));
      assertTrue(e.getMessage().startsWith("p.json: " + bad[1] + ":"), e.getMessage());
    }
  }
}
