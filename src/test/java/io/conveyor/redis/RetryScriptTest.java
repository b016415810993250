package io.conveyor.redis;

import io.conveyor.testing.TestRedis;
import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.conveyor.model.Dequeued;
import io.conveyor.model.TxStatus;
import io.conveyor.testing.ScriptTest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** retry: a failed attempt sleeps until it is due, then the same step is handed out with its attempt raised. */
class RetryScriptTest extends ScriptTest {
  private Dequeued tx;

  @BeforeEach
  void arrange() {
    cmd("HSET", h.keys.stateH("tx-1"), "processingState", "queued", "attempt", 0, "status", "running", "owner", "acme",
        "group", "g", "type", "p", "version", "v", "step", 2, "data", "{\"at\":2}", "metadata", "{}", "created", 1);
    TestRedis.queueIn(h.keys.qInZ(0, "g"), "tx-1");
    tx = h.store.queue.dequeue(0, "g", "node-a", 1).await().get(0);
  }

  private static JsonObject error(int attempt) {
    return new JsonObject().put("step", 3).put("attempt", attempt).put("code", "failed").put("message", "no " + attempt);
  }

  private String field(String name) {
    var r = cmd("HGET", h.keys.stateH("tx-1"), name);
    return r == null ? null : r.toString();
  }

  @Test
  void a_retry_sleeps_until_due_and_the_same_step_comes_back_with_its_next_attempt() {
    assertEquals(1, tx.stepAttempt());
    long due = h.clock.millis() + 1_000;
    JsonObject view = new JsonObject().put("step", 3).put("attempt", 2).put("nextAttemptAt", due);
    assertEquals(Code.SLEEPING, h.store.run.retry(tx, "node-a", due, 2, view, error(1), "2:5:7").await());
    assertEquals("sleeping", field("processingState"));
    assertEquals(due, cmd("ZSCORE", h.keys.sleepingZ(0), "tx-1").toLong());
    assertNull(cmd("ZSCORE", h.keys.processingZ(0), "tx-1"));
    assertNull(cmd("ZSCORE", h.keys.inflightZ(0, "node-a"), "tx-1"));
    assertEquals(view, new JsonObject(field("retry")));
    assertEquals("2:5:7;", field("stepTimes"));

    h.clock.advance(Duration.ofMillis(999));
    assertEquals(0, h.store.control.wake(0, 10).await());
    h.clock.advance(Duration.ofMillis(1));
    assertEquals(1, h.store.control.wake(0, 10).await());
    Dequeued again = h.store.queue.dequeue(0, "g", "node-b", 1).await().get(0);
    assertEquals(2, again.step());
    assertEquals(2, again.stepAttempt());
    assertEquals(new JsonObject().put("at", 2), again.stepInput());

    // the second attempt fails for good: both errors are kept, the retry view goes
    assertEquals(List.of(Code.OK), h.store.run.complete("node-b", Duration.ofHours(1), List.of(new RunStore.Completion(
        "tx-1", again.attempt(), TxStatus.FAILED, null, "no 2", null, error(2)))).await());
    assertEquals(new JsonArray().add(error(1)).add(error(2)), new JsonArray(field("errors")));
    assertNull(field("retry"));
    assertNull(field("stepAttempt"));
  }

  @Test
  void past_max_errors_the_oldest_errors_fold_into_one_summary_and_the_newest_stay() {
    RunStore run = new RunStore(withMaxErrors(h.store.context, 3));
    Dequeued at = tx;
    for (int n = 1; n <= 5; n++) {
      assertEquals(Code.SLEEPING, run.retry(at, "node-a", h.clock.millis(), n + 1, new JsonObject(),
          error(n).put("at", n * 1000L).put("code", n % 2 == 0 ? "http-500" : "failed"), null).await());
      assertEquals(1, h.store.control.wake(0, 10).await());
      at = h.store.queue.dequeue(0, "g", "node-a", 1).await().get(0);
      assertEquals(Math.min(n, 3), new JsonArray(field("errors")).size(), "after " + n + " errors");
    }
    assertEquals(List.of(Code.OK), run.complete("node-a", Duration.ofHours(1), List.of(new RunStore.Completion(
        "tx-1", at.attempt(), TxStatus.FAILED, null, "no 6", null, error(6).put("at", 6000L)))).await());
    JsonArray kept = new JsonArray(field("errors"));
    assertEquals(3, kept.size(), kept.encode());
    assertEquals(new JsonObject().put("summary", true).put("dropped", 4).put("from", 1000).put("to", 4000)
        .put("codes", new JsonObject().put("failed", 2).put("http-500", 2)), kept.getJsonObject(0));
    assertEquals(List.of(5, 6), List.of(kept.getJsonObject(1).getInteger("attempt"),
        kept.getJsonObject(2).getInteger("attempt")));
  }

  @Test
  void a_checkpoint_starts_the_next_step_at_its_first_attempt() {
    long due = h.clock.millis();
    h.store.run.retry(tx, "node-a", due, 2, new JsonObject(), error(1), null).await();
    h.store.control.wake(0, 10).await();
    Dequeued again = h.store.queue.dequeue(0, "g", "node-b", 1).await().get(0);
    assertEquals(Code.OK, h.store.run.checkpoint("tx-1", again.attempt(), 3, new JsonObject(), null).await());
    assertNull(field("stepAttempt"));
    assertNull(field("retry"));
    assertEquals(1, new JsonArray(field("errors")).size(), "the history stays");
  }

  @Test
  void a_retry_is_refused_for_an_older_attempt_and_when_a_cancel_was_asked_for_writing_nothing() {
    Dequeued stale = new Dequeued("tx-1", tx.attempt() - 1, "p", "v", 2, new JsonObject(), "acme", null,
        new JsonObject(), 1, "in", null, 0, null, 1, null, 1, -1, null);
    assertEquals(Code.FENCED, h.store.run.retry(stale, "node-a", 5, 2, new JsonObject(), error(1), null).await());
    cmd("HSET", h.keys.stateH("tx-1"), "cancelRequested", "1");
    assertEquals(Code.CANCELLED, h.store.run.retry(tx, "node-a", 5, 2, new JsonObject(), error(1), null).await());
    assertEquals("processing", field("processingState"));
    assertNull(field("errors"));
    assertEquals(0L, cmd("ZCARD", h.keys.sleepingZ(0)).toLong());
  }

  /** The context with another limits.maxErrors (the stores read their limits from it). */
  static StoreContext withMaxErrors(StoreContext c, int maxErrors) {
    io.conveyor.config.Config.Limits d = c.limits();
    return new StoreContext(c.link(), c.keys(), c.scripts(), c.clock(), c.replicas(),
        new io.conveyor.config.Config.Limits(d.maxDepth(), d.maxDescendants(), d.maxLive(), d.maxPayloadBytes(),
            maxErrors));
  }
}
