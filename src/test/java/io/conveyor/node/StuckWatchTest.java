package io.conveyor.node;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.Dequeued;
import io.conveyor.pipeline.CompiledPipeline;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.pipeline.PipelineParser;
import io.conveyor.redis.StuckStore;
import io.conveyor.testing.ScriptHarness;
import io.conveyor.testing.ScriptTest;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Stuck work on the real Redis, found by the reaper's watch (StuckWatch, stuck.lua), the clock moved by hand. */
class StuckWatchTest extends ScriptTest {
  private static final Duration GRACE = Duration.ofMinutes(1);
  private static final Duration HELD_AFTER = Duration.ofMinutes(15);
  private final String a = ScriptHarness.txId(0, "a");
  private PipelineCatalog catalog;
  private StuckWatch watch;
  private StuckStore store;
  private String version;

  @BeforeEach
  void arrange() {
    catalog = new PipelineCatalog(new PipelineParser(new TestSteps().registry()));
    CompiledPipeline slow = catalog.parser().parse(new JsonObject().put("name", "slow").put("nodeGroup", "g")
        .put("transactionType", true).put("timeout", "30s").put("steps", new JsonArray()
            .add(new JsonObject().put("type", "util/fixed-reply").put("params", new JsonObject().put("reply", new JsonObject())))
            .add(new JsonObject().put("type", "util/fixed-reply").put("timeout", "10m")
                .put("params", new JsonObject().put("reply", new JsonObject())))), "test");
    catalog.publish(h.store.pipelines, slow, h.clock.millis()).await();
    version = slow.version();
    store = new StuckStore(h.store.context);
    // a fresh catalog, as on another node: the reaper reads the version from Redis
    watch = new StuckWatch(store, new StuckWatch.Settings(new StuckStore.Settings(GRACE, HELD_AFTER, 100),
        Duration.ofSeconds(5), new PipelineCatalog(new PipelineParser(new TestSteps().registry()))),
        h.store.pipelines, h.clock);
  }

  private void state(String txId, Object... fields) {
    Object[] all = new Object[fields.length + 2];
    all[0] = "HSET";
    all[1] = h.keys.stateH(txId);
    System.arraycopy(fields, 0, all, 2, fields.length);
    cmd(all);
    cmd("ZADD", h.keys.liveZ(0), h.clock.millis(), txId);
  }

  private Dequeued running(String txId) {
    state(txId, "status", "running", "processingState", "queued", "attempt", 0, "owner", "acme", "group", "g",
        "type", "slow", "version", version, "step", 0, "data", "{}", "metadata", "{}", "created", h.clock.millis());
    TestRedis.queueIn(h.keys.qInZ(0, "g"), txId);
    return h.store.queue.dequeue(0, "g", "node-a", 1).await().get(0);
  }

  private StuckStore.Round round() {
    return watch.round(0, Set.of("g")).await();
  }

  private JsonObject listed(String txId) {
    var text = cmd("HGET", h.keys.stuck(0, "H"), txId);
    return text == null ? null : new JsonObject(text.toString());
  }

  private List<JsonObject> events() {
    return new io.conveyor.redis.EventStore(h.store.context).read(new io.conveyor.redis.EventStore.Filter("stuck", null, null, null, null, 100)).await()
        .stream().map(o -> (JsonObject) o).toList();
  }

  private long count(String reason) {
    return store.counts().await().get(reason);
  }

  @Test
  void a_run_past_its_steps_timeout_plus_grace_is_listed_once_with_one_event_and_leaves_when_it_moves_on() {
    Dequeued tx = running(a);
    h.clock.advance(Duration.ofSeconds(30).plus(GRACE));
    assertEquals(0, round().found(), "at its step's timeout plus grace exactly, not yet");
    h.clock.advance(Duration.ofMillis(1));
    assertEquals(1, round().found());
    JsonObject e = listed(a);
    assertEquals("running", e.getString("reason"));
    assertEquals(30_000L, e.getLong("timeoutMs"));
    assertEquals("node-a", e.getString("node"));
    assertEquals(1, count("running"));
    assertEquals(0, round().found(), "listed already: no second event");
    List<JsonObject> events = events();
    assertEquals(1, events.size());
    assertEquals(a, events.get(0).getString("subject"));
    assertEquals("running", events.get(0).getJsonObject("details").getString("reason"));
    assertEquals("reported", events.get(0).getJsonObject("details").getString("action"));
    // it passes its first step: its second has ten minutes, from the checkpoint
    h.store.run.checkpoint(a, tx.attempt(), 1, new JsonObject(), "").await();
    assertEquals(1, round().cleared());
    assertNull(listed(a));
    assertEquals(0, count("running"));
    h.clock.advance(Duration.ofMinutes(10));
    assertEquals(0, round().found(), "the second step's own timeout counts");
    h.clock.advance(GRACE.plusMillis(1));
    assertEquals(1, round().found());
  }

  @Test
  void a_sleeper_past_its_wake_time_by_more_than_grace_is_listed_until_the_wake_queues_it() {
    Dequeued tx = running(a);
    long wakeAt = h.clock.millis() + 60_000;
    h.store.run.sleep(tx, "node-a", "g", wakeAt, null).await();
    h.clock.advance(Duration.ofMillis(60_000).plus(GRACE));
    assertEquals(0, round().found());
    h.clock.advance(Duration.ofMillis(1));
    assertEquals(1, round().found());
    assertEquals("sleeping", listed(a).getString("reason"));
    assertEquals(wakeAt, listed(a).getLong("wakeAt"));
    assertEquals(1, h.store.control.wake(0, 10).await());
    assertEquals(1, round().cleared());
    assertEquals(Map.of("running", 0L, "sleeping", 0L, "retrying", 0L, "waiting", 0L, "held", 0L), store.counts().await());
  }

  @Test
  void a_sleeper_that_nothing_would_wake_is_given_a_wake_entry_due_now_and_an_event_says_so() {
    Dequeued tx = running(a);
    h.store.run.sleep(tx, "node-a", "g", h.clock.millis() + 3_600_000, null).await();
    cmd("ZREM", h.keys.sleepingZ(0), a); // lost: in no index but liveZ
    StuckStore.Round r = round();
    assertEquals(1, r.repaired());
    assertEquals(0, r.found());
    assertEquals(h.clock.millis(), cmd("ZSCORE", h.keys.sleepingZ(0), a).toLong());
    assertNull(listed(a), "repaired, not listed");
    assertEquals("woken", events().get(0).getJsonObject("details").getString("action"));
    assertEquals(1, h.store.control.wake(0, 10).await(), "the next wake queues it");
  }

  @Test
  void a_retry_with_no_due_attempt_is_repaired_and_one_long_overdue_is_listed_as_retrying() {
    Dequeued tx = running(a);
    long due = h.clock.millis() + 1_000;
    h.store.run.retry(tx, "node-a", due, 2, new JsonObject().put("step", 0), new JsonObject().put("code", "x"), "")
        .await();
    cmd("ZREM", h.keys.sleepingZ(0), a);
    assertEquals(1, round().repaired());
    assertEquals("retrying", events().get(0).getJsonObject("details").getString("reason"));
    h.clock.advance(GRACE.plusSeconds(1));
    assertEquals(1, round().found());
    assertEquals("retrying", listed(a).getString("reason"));
    assertEquals(1, count("retrying"));
  }

  @Test
  void a_parent_waiting_on_a_child_that_ended_is_listed_and_one_whose_child_runs_is_not() {
    String child = ScriptHarness.txId(0, "child");
    state(a, "status", "running", "processingState", "sleeping", "waitingFor", child, "owner", "acme");
    state(child, "status", "running", "processingState", "processing", "owner", "acme");
    h.clock.advance(GRACE.multipliedBy(2));
    assertEquals(0, round().found(), "its child runs");
    cmd("HSET", h.keys.stateH(child), "status", "success", "processingState", "complete", "completed",
        h.clock.millis());
    assertEquals(0, round().found(), "ended, but within grace");
    h.clock.advance(GRACE.plusMillis(1));
    assertEquals(1, round().found());
    assertEquals("waiting", listed(a).getString("reason"));
    assertEquals(child, listed(a).getString("waitingFor"));
  }

  @Test
  void a_parent_waiting_on_branches_is_listed_only_once_every_branch_has_ended() {
    String b1 = ScriptHarness.txId(0, "b1");
    String b2 = ScriptHarness.txId(0, "b2");
    state(a, "status", "running", "processingState", "sleeping", "waitingFor", "fork", "owner", "acme",
        "fork", new JsonObject().put("ids", new JsonArray().add(b1).add(b2)).put("need", 2).encode());
    state(b1, "status", "success", "processingState", "complete", "completed", h.clock.millis());
    state(b2, "status", "running", "processingState", "pending");
    h.clock.advance(GRACE.multipliedBy(2));
    assertEquals(0, round().found(), "a branch is still pending");
    cmd("DEL", h.keys.stateH(b2)); // archived long ago
    assertEquals(1, round().found());
    assertEquals("waiting", listed(a).getString("reason"));
  }

  @Test
  void work_held_back_by_a_limit_longer_than_held_after_is_listed_until_the_limit_lets_it_through() {
    state(a, "status", "running", "processingState", "queued", "owner", "acme", "group", "g", "type", "slow");
    cmd("SADD", h.keys.qHeldS(0, "g"), "slow");
    cmd("ZADD", h.keys.qHeldZ(0, "g", "slow"), h.clock.millis(), a);
    h.clock.advance(HELD_AFTER);
    assertEquals(0, round().found());
    h.clock.advance(Duration.ofMillis(1));
    assertEquals(1, round().found());
    assertEquals("held", listed(a).getString("reason"));
    assertEquals("slow", listed(a).getString("limit"));
    assertEquals(1, store.list("held", "acme", null, 10).await().items().size());
    assertEquals(0, store.list("held", "other", null, 10).await().items().size());
    cmd("ZREM", h.keys.qHeldZ(0, "g", "slow"), a);
    assertEquals(1, round().cleared());
    assertEquals(0, count("held"));
  }

  @Test
  void ended_transactions_are_never_stuck_and_a_listed_one_that_ends_leaves_the_list() {
    Dequeued tx = running(a);
    h.store.run.sleep(tx, "node-a", "g", h.clock.millis() + 1, null).await();
    h.clock.advance(GRACE.multipliedBy(2));
    assertEquals(1, round().found());
    cmd("HSET", h.keys.stateH(a), "status", "cancelled", "processingState", "complete");
    StuckStore.Round r = round();
    assertEquals(1, r.cleared());
    assertEquals(0, r.found());
    assertNotNull(cmd("ZSCORE", h.keys.sleepingZ(0), a), "nothing repaired on an ended one");
    assertTrue(store.list(null, null, null, 10).await().items().isEmpty());
  }
}
