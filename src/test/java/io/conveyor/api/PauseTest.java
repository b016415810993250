package io.conveyor.api;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.domain.Pauses;
import io.conveyor.domain.Search;
import io.conveyor.model.TxException;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.StepResult;
import io.conveyor.redis.PauseStore;
import io.conveyor.redis.ReadStore;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Pause and resume on a real node (issue 34): a running one stops at its next step boundary and holds no slot, a
 * sleeper's timer that falls due while paused fires or is skipped on resume, a queued one is parked when its turn
 * comes, a tree follows its root, and a search pauses many.
 */
class PauseTest {
  private final TestSteps steps = new TestSteps();
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private TestNode node;

  @BeforeEach
  void startNode() {
    node = start(new TestNode());
  }

  private TestNode start(TestNode n) {
    return n.clock(clock).set("REAPER_INTERVAL", "20ms").set("NODE_IDLE_WAIT", "200ms")
        .pipeline("two", "{'name':'two','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/hold'},{'type':'test/record'}]}")
        .pipeline("sleepy", "{'name':'sleepy','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/delay','params':{'duration':'1h'}},{'type':'test/record'}]}")
        .pipeline("parent", "{'name':'parent','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'child'}},{'type':'test/record'}]}")
        .pipeline("child", "{'name':'child','nodeGroup':'master','steps':[{'type':'test/hold'},{'type':'test/record'}]}")
        .pipeline("flaky", "{'name':'flaky','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/flaky','params':{'failures':1}}],'retry':{'maxAttempts':3,'initialInterval':'1h'}}")
        .pipeline("hopper", "{'name':'hopper','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/hold'},{'type':'test/record'}]}")
        .pipeline("capped", "{'name':'capped','nodeGroup':'master','transactionType':true,'maxConcurrency':1,"
            + "'steps':[{'type':'test/hold'},{'type':'test/record'}]}")
        .start(steps.registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private Pauses pauses() {
    return new Pauses(new PauseStore(node.transactions.context()), node.transactions);
  }

  private TxSummary pause(String txId) {
    return pauses().pause(txId, "acme", "ops", Pauses.pauseAsk(new JsonObject().put("reason", "step 2 is wrong")))
        .await();
  }

  private TxSummary resume(String txId, String timers) {
    return pauses().resume(txId, "acme", "ops", Pauses.resumeAsk(new JsonObject().put("timers", timers))).await();
  }

  private String field(String txId, String name) {
    return node.stateField(txId, name);
  }

  private void until(String txId, String name, String value) {
    node.awaitField(txId, name, value);
  }

  private static TxException refusal(Runnable r) {
    Throwable e = assertThrows(Throwable.class, r::run);
    Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    assertTrue(t instanceof TxException, String.valueOf(t));
    return (TxException) t;
  }

  @Test
  void a_running_one_finishes_its_step_keeps_its_result_and_does_not_start_the_next_until_resumed() {
    String txId = node.start("two", new JsonObject().put("n", 1));
    Promise<StepResult> step = steps.nextHeld();
    TxSummary paused = pause(txId);
    assertEquals("ops", paused.toJson().getJsonObject("paused").getString("by"));
    assertEquals("step 2 is wrong", paused.toJson().getJsonObject("paused").getString("reason"));
    step.complete(StepResult.success(new JsonObject().put("first", "done")));
    until(txId, "pausedQueue", "in");
    assertEquals("queued", field(txId, "processingState"));
    assertEquals("1", field(txId, "step"), "the step's result is kept: it stands at the next step");
    assertNull(cmd("ZSCORE", node.keys.processingZ(node.keys.partitionOf(txId)), txId), "off every worker");
    assertEquals(0, steps.recorded.size(), "the next step did not start");
    assertEquals(TxStatus.RUNNING, node.transactions.status(txId, "acme").await().status());

    TxSummary resumed = resume(txId, "fire");
    assertNull(resumed.toJson().getJsonObject("paused"));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
    assertEquals(new JsonObject().put("first", "done"), steps.recorded.get(0).getJsonObject("input"),
        "it went on with the result its step had before the pause");
  }

  @Test
  void a_paused_run_holds_no_concurrency_slot_so_another_of_a_cap_one_pipeline_runs_meanwhile() {
    node.close();
    // one partition (a hash tag on a Redis Cluster): the cap of one is this one queue's
    node = start(TestNode.withPrefix("{" + io.conveyor.testing.TestRedis.newPrefix().replace(":", "") + "}:")
        .set("REDIS_PARTITIONS", "1").set("NODE_WORKERS", "4"));
    String first = node.start("capped", new JsonObject());
    Promise<StepResult> firstStep = steps.nextHeld();
    String second = node.start("capped", new JsonObject());
    Eventually.until(Duration.ofSeconds(10), "the second held back by the cap",
        () -> cmd("ZCARD", node.keys.qHeldZ(0, "master", "capped")).toLong(), n -> n == 1);
    pause(first);
    firstStep.complete(StepResult.success(new JsonObject()));
    steps.nextHeld().complete(StepResult.success(new JsonObject())); // the second's step: it got the slot
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(second).status());
    assertEquals("queued", field(first, "processingState"));
    assertEquals(1, steps.recorded.size(), "only the second ran its last step");
    resume(first, "fire");
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(first).status());
    assertNull(cmd("HGET", node.keys.qRunH(0, "master"), "capped"), "no slot left taken");
  }

  @Test
  void a_pause_asked_while_its_step_runs_holds_when_the_node_stops_and_a_new_node_takes_the_run_back() {
    node.close();
    node = start(new TestNode().set("NODE_DRAIN_TIME", "100ms"));
    String txId = node.start("two", new JsonObject());
    steps.nextHeld(); // never answered: the node stops with the step running, and puts the run back
    pause(txId);
    TestNode first = node;
    first.stopKeepingData();
    node = start(first.sibling());
    until(txId, "pausedQueue", "in");
    assertEquals("queued", field(txId, "processingState"));
    assertTrue(steps.held.isEmpty(), "the new node did not run its step");
    assertNotNull(field(txId, "paused"), "still paused");
    resume(txId, "fire");
    steps.nextHeld().complete(StepResult.success(new JsonObject()));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
  }

  private String asleep() {
    String txId = node.start("sleepy", new JsonObject());
    until(txId, "processingState", "sleeping");
    return txId;
  }

  @Test
  void a_timer_that_falls_due_while_paused_fires_on_resume() {
    String txId = asleep();
    pause(txId);
    clock.advance(Duration.ofHours(2));
    Eventually.until(Duration.ofSeconds(10), "the wake to park it", () -> field(txId, "pausedWake"),
        v -> v != null);
    assertEquals("sleeping", field(txId, "processingState"), "it did not move");
    assertEquals(0, steps.recorded.size());
    int p = node.keys.partitionOf(txId);
    clock.advance(Duration.ofHours(1));
    // the stuck look walks every live one: a paused sleeper in no sleepingZ is neither listed nor repaired
    var round = new io.conveyor.redis.StuckStore(node.transactions.context()).check(p,
        new io.conveyor.redis.StuckStore.Settings(Duration.ofSeconds(1), Duration.ofSeconds(1), 1000),
        java.util.List.of("master"), java.util.List.of(), 0, 0).await();
    assertEquals(0, round.found() + round.repaired(), "nothing stuck: " + round);
    assertNull(cmd("HGET", node.keys.stuck(p, "H"), txId));
    assertNull(cmd("ZSCORE", node.keys.sleepingZ(p), txId), "not woken by a repair");
    resume(txId, "fire");
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
  }

  @Test
  void a_timer_skipped_on_resume_keeps_the_time_it_had_left_when_paused() {
    String txId = asleep();
    TxSummary paused = pause(txId);
    long since = java.time.Instant.parse(paused.toJson().getJsonObject("paused").getString("since")).toEpochMilli();
    clock.advance(Duration.ofHours(2));
    Eventually.until(Duration.ofSeconds(10), "the wake to park it", () -> field(txId, "pausedWake"),
        v -> v != null);
    long due = Long.parseLong(field(txId, "pausedWake"));
    resume(txId, "skip");
    long at = cmd("ZSCORE", node.keys.sleepingZ(node.keys.partitionOf(txId)), txId).toLong();
    assertEquals(due + (clock.millis() - since), at, "due later by the time it was paused");
    assertEquals("sleeping", field(txId, "processingState"));
    clock.advance(Duration.ofMillis(at - clock.millis() + 1));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
  }

  @Test
  void a_delayed_start_whose_time_comes_while_paused_does_not_start_until_resumed() {
    String txId = node.transactions.start(new JsonObject().put("type", "sleepy").put("owner", "acme")
        .put("delay", "1h")).await().txId();
    assertEquals("scheduled", field(txId, "processingState"));
    pause(txId);
    clock.advance(Duration.ofHours(2));
    Eventually.until(Duration.ofSeconds(10), "the wake to park it", () -> field(txId, "pausedWake"),
        v -> v != null);
    assertEquals("scheduled", field(txId, "processingState"), "it did not start");
    resume(txId, "fire");
    until(txId, "processingState", "sleeping"); // it started: its first step sleeps for an hour
    assertNull(field(txId, "paused"));
  }

  @Test
  void a_delayed_start_resumed_with_skip_shows_its_later_start_time() {
    String txId = node.transactions.start(new JsonObject().put("type", "sleepy").put("owner", "acme")
        .put("delay", "1h")).await().txId();
    long startAt = Long.parseLong(field(txId, "startAt"));
    pause(txId);
    clock.advance(Duration.ofMinutes(10));
    resume(txId, "skip");
    long at = cmd("ZSCORE", node.keys.sleepingZ(node.keys.partitionOf(txId)), txId).toLong();
    assertEquals(startAt + Duration.ofMinutes(10).toMillis(), at, "its start moved by the time paused");
    assertEquals(Long.toString(at), field(txId, "startAt"), "and the summary says so");
  }

  @Test
  void a_retry_that_falls_due_while_paused_and_is_skipped_runs_its_next_attempt_later_by_the_time_paused() {
    String txId = node.start("flaky", new JsonObject());
    until(txId, "processingState", "sleeping"); // its first attempt failed: the next is due in an hour
    TxSummary paused = pause(txId);
    long since = java.time.Instant.parse(paused.toJson().getJsonObject("paused").getString("since")).toEpochMilli();
    clock.advance(Duration.ofHours(3));
    Eventually.until(Duration.ofSeconds(10), "the wake to park it", () -> field(txId, "pausedWake"),
        v -> v != null);
    assertEquals(1, steps.attempts.size(), "no attempt while paused");
    long due = Long.parseLong(field(txId, "pausedWake"));
    resume(txId, "skip");
    assertEquals(due + (clock.millis() - since), cmd("ZSCORE", node.keys.sleepingZ(node.keys.partitionOf(txId)), txId)
        .toLong());
    clock.advance(Duration.ofHours(2));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
    assertEquals(2, steps.attempts.size());
  }

  @Test
  void a_queued_one_is_parked_when_its_turn_comes_and_resumed_where_it_stood() {
    node.transactions.group("master", "pause", "test").await();
    String txId = node.start("two", new JsonObject());
    pause(txId);
    node.transactions.group("master", "resume", "test").await();
    until(txId, "pausedQueue", "in");
    assertEquals("queued", field(txId, "processingState"));
    assertTrue(steps.held.isEmpty(), "its first step never started");
    resume(txId, "fire");
    steps.nextHeld().complete(StepResult.success(new JsonObject()));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
  }

  @Test
  void children_follow_their_root_on_pause_and_on_resume() {
    String parent = node.start("parent", new JsonObject());
    Promise<StepResult> childStep = steps.nextHeld();
    String child = field(parent, "waitingFor");
    pause(parent);
    assertNotNull(field(child, "paused"), "its running child is paused too");
    childStep.complete(StepResult.success(new JsonObject()));
    until(child, "pausedQueue", "in");
    assertEquals(0, steps.recorded.size(), "the child's next step did not start");
    resume(parent, "fire");
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(parent).status());
    assertEquals(2, steps.recorded.size(), "the child's last step, then the parent's");
  }

  @Test
  void a_child_its_running_step_starts_after_the_root_was_paused_starts_paused_and_resumes_with_it() {
    String parent = node.start("hopper", new JsonObject());
    Promise<StepResult> step = steps.nextHeld();
    pause(parent);
    step.complete(new StepResult.Child("child", new JsonObject()));
    until(parent, "processingState", "sleeping");
    String child = field(parent, "waitingFor");
    until(child, "pausedQueue", "in");
    assertTrue(steps.held.isEmpty(), "the child's first step never started");
    resume(parent, "fire");
    steps.nextHeld().complete(StepResult.success(new JsonObject()));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(parent).status());
    assertEquals(2, steps.recorded.size(), "the child's last step, then the parent's");
  }

  @Test
  void a_search_finds_the_paused_and_a_bulk_pause_by_search_pauses_every_match() {
    String one = asleep();
    String two = asleep();
    BulkPause bulk = new BulkPause(new Search(new ReadStore(node.transactions.context()), node.keys, null), pauses());
    JsonObject done = bulk.run(Map.of("pipeline", "sleepy"), "acme", "ops", false, Pauses.pauseAsk(null)).await();
    assertEquals(2, done.getInteger("paused"), done.encode());
    JsonObject found = new Search(new ReadStore(node.transactions.context()), node.keys, null)
        .run(Search.parse(Map.of("status", "paused"), "acme")).await();
    assertEquals(java.util.Set.of(one, two), found.getJsonArray("transactions").stream()
        .map(t -> ((JsonObject) t).getString("txId")).collect(java.util.stream.Collectors.toSet()));
    assertEquals("paused", found.getJsonArray("transactions").getJsonObject(0).getString("phase"));
    JsonObject back = bulk.run(Map.of(), "acme", "ops", true, Pauses.resumeAsk(null)).await();
    assertEquals(2, back.getInteger("resumed"), back.encode());
    assertNull(field(one, "paused"));
    assertEquals(TxException.Kind.INVALID_INPUT, refusal(() -> bulk.run(Map.of("statuss", "paused"), "acme", "ops",
        true, Pauses.resumeAsk(null)).await()).kind());
    // a pause with no filter (a query lost on the way) is refused, and pauses nothing
    TxException unnarrowed = refusal(() -> bulk.run(Map.of("limit", "5"), "acme", "ops", false,
        Pauses.pauseAsk(null)).await());
    assertEquals("status", unnarrowed.field());
    assertNull(field(one, "paused"));
    assertNull(field(two, "paused"));
  }

  @Test
  void bad_input_is_refused_naming_the_field_and_leaves_the_transaction_as_it_was() {
    String txId = asleep();
    TxException unknown = refusal(() -> Pauses.pauseAsk(new JsonObject().put("reasn", "x")));
    assertEquals("reasn", unknown.field());
    assertEquals("timers", refusal(() -> Pauses.resumeAsk(new JsonObject().put("timers", "later"))).field());
    assertEquals("tree", refusal(() -> Pauses.pauseAsk(new JsonObject().put("tree", "yes"))).field());
    assertEquals("txId", refusal(() -> pause("tx-nothex")).field());
    assertEquals(TxException.Kind.NOT_FOUND, refusal(() -> pauses().pause(txId, "globex", "globex",
        Pauses.pauseAsk(null)).await()).kind(), "another owner's is not found");
    assertNull(field(txId, "paused"), "nothing written");
    assertEquals(TxException.Kind.NOT_PAUSED, refusal(() -> resume(txId, "fire")).kind());

    JsonObject first = pause(txId).toJson().getJsonObject("paused");
    assertEquals(first, pause(txId).toJson().getJsonObject("paused"), "pausing a paused one changes nothing");
    node.transactions.cancel(txId, "acme").await();
    assertEquals(TxException.Kind.ALREADY_FINAL, refusal(() -> pause(txId)).kind());
    assertEquals(TxException.Kind.ALREADY_FINAL, refusal(() -> resume(txId, "fire")).kind());
  }

  @Test
  void a_paused_one_whose_node_is_taken_over_mid_step_stays_paused_and_runs_the_step_again_only_when_resumed()
      throws Exception {
    TestSteps own = new TestSteps();
    // the test judges the node dead itself (as FencingTest does): the node's own reaper would race it
    try (TestNode n = new TestNode().set("HEARTBEAT_INTERVAL", "200ms").set("HEARTBEAT_TTL", "1s")
        .set("REAPER_INTERVAL", "1h").set("REAPER_LEASE", "2h")
        .pipeline("two", "{'name':'two','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/hold'},{'type':'test/record'}]}").start(own.registry())) {
      String nodeId = n.node().nodeId();
      String txId = n.start("two", new JsonObject());
      Promise<StepResult> first = own.held.poll(10, java.util.concurrent.TimeUnit.SECONDS);
      assertNotNull(first, "step 0 runs");
      Pauses p = new Pauses(new PauseStore(n.transactions.context()), n.transactions);
      p.pause(txId, "acme", "ops", Pauses.pauseAsk(null)).await();

      // the node is judged dead while the paused one's step runs: the reaper takes it back (bench/pause kills a
      // node only once everything is parked; this is the case it does not reach)
      Integer recovered = Eventually.until(Duration.ofSeconds(10), "the reaper to take the node over", () -> {
        cmd("DEL", n.keys.heartbeat(nodeId));
        return n.store.liveness.reap(true, Duration.ofSeconds(10)).await().recovered().get(nodeId);
      }, r -> r != null);
      assertEquals(1, recovered);
      // taken back, it is still paused: dequeue parks it instead of running step 0 again
      Eventually.until(Duration.ofSeconds(10), txId + " parked", () -> cmd("HGET", n.keys.stateH(txId),
          "pausedQueue"), r -> r != null);
      assertNotNull(cmd("HGET", n.keys.stateH(txId), "paused"), "the pause survives the takeover");
      assertEquals("queued", cmd("HGET", n.keys.stateH(txId), "processingState").toString());
      assertEquals("0", cmd("HGET", n.keys.stateH(txId), "step").toString(), "its step did not finish");
      assertTrue(own.held.isEmpty(), "step 0 did not run again while paused");
      first.complete(StepResult.success(new JsonObject().put("run", 0))); // late: refused by its fence (below)

      p.resume(txId, "acme", "ops", Pauses.resumeAsk(null)).await();
      Promise<StepResult> again = own.held.poll(10, java.util.concurrent.TimeUnit.SECONDS);
      assertNotNull(again, "resumed, step 0 runs again (the run the dead node held never checkpointed)");
      again.complete(StepResult.success(new JsonObject().put("run", 1)));
      assertEquals(TxStatus.SUCCESS, n.awaitFinal(txId).status());
      assertEquals(1, own.recorded.size(), "step 1 ran once");
      assertEquals(1, own.recorded.get(0).getJsonObject("input").getInteger("run"), "with the second run's result");
    }
  }
}
