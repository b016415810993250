package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Retry policies on a real node: a failed step sleeps off the worker and runs again, with the clock moved by hand. */
class RetryTest {
  private final TestSteps steps = new TestSteps();
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private TestNode node;

  private static String pipeline(String name, String step, String retry) {
    return "{'name':'" + name + "','nodeGroup':'master','transactionType':true,'steps':[{'type':'test/record'},"
        + step + ",{'type':'test/record'}]" + (retry == null ? "" : ",'retry':" + retry) + "}";
  }

  @BeforeEach
  void startNode() {
    node = new TestNode().clock(clock).set("REAPER_INTERVAL", "20ms")
        .pipeline("flaky", pipeline("flaky", "{'type':'test/flaky','params':{'failures':2}}",
            "{'maxAttempts':5,'initialInterval':'1m','backoffCoefficient':2,'jitter':false}"))
        .pipeline("picky", pipeline("picky", "{'type':'test/flaky','params':{'failures':9,'code':'bad-input'},"
            + "'retry':{'maxAttempts':5,'initialInterval':'1s','nonRetryable':['bad-input']}}", null))
        .pipeline("hopeless", pipeline("hopeless", "{'type':'test/flaky','params':{'failures':9}}",
            "{'maxAttempts':3,'initialInterval':'1s','jitter':false}"))
        .pipeline("slow", pipeline("slow", "{'type':'test/hold','timeout':'50ms'}",
            "{'maxAttempts':2,'initialInterval':'1s','jitter':false}"))
        .start(steps.registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private JsonObject status(String txId) {
    return node.transactions.status(txId, "acme").await().toJson();
  }

  /** Waits until the transaction sleeps for the given attempt, and answers its status. */
  private JsonObject waitingFor(String txId, int attempt) {
    return Eventually.until(Duration.ofSeconds(10), txId + " to wait for attempt " + attempt, () -> status(txId),
        s -> "sleeping".equals(s.getString("processingState")) && s.getJsonObject("retry") != null
            && s.getJsonObject("retry").getInteger("attempt") == attempt);
  }

  private long attemptsOf(String txId) {
    return steps.attempts.stream().filter(a -> a.getString("txId").equals(txId)).count();
  }

  @Test
  void a_failing_step_is_retried_at_that_step_with_backoff_until_it_succeeds() {
    String txId = node.start("flaky", new JsonObject().put("n", 1));
    JsonObject first = waitingFor(txId, 2);
    JsonObject retry = first.getJsonObject("retry");
    assertEquals(2, retry.getInteger("step"));
    assertEquals(5, retry.getInteger("maxAttempts"));
    assertEquals(Instant.ofEpochMilli(clock.millis() + 60_000).toString(), retry.getString("nextAttemptAt"),
        "the first retry waits initialInterval");
    assertEquals("failed", retry.getJsonObject("lastError").getString("code"));
    assertEquals(0, node.total("ZCARD", node.keys::processingZ), "a waiting retry holds no worker");

    assertEquals(clock.millis() + 60_000, cmd("ZSCORE", node.keys.sleepingZ(node.keys.partitionOf(txId)), txId)
        .toLong(), "it sleeps until the attempt is due");
    assertEquals(1, attemptsOf(txId));

    clock.advance(Duration.ofMinutes(1));
    JsonObject second = waitingFor(txId, 3);
    assertEquals(Instant.ofEpochMilli(clock.millis() + 120_000).toString(),
        second.getJsonObject("retry").getString("nextAttemptAt"), "the second retry waits twice as long");
    clock.advance(Duration.ofMinutes(2));

    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, done.status(), done.note());
    assertEquals(3, done.output().getInteger("attempts"));
    assertEquals(3, attemptsOf(txId), "the flaky step ran once per attempt");
    assertEquals(2, steps.recorded.stream().filter(r -> r.getString("txId").equals(txId)).count(),
        "the steps around it ran once each: a retry resumes at the failed step");
    JsonArray errors = status(txId).getJsonArray("errors");
    assertEquals(2, errors.size(), "both failed attempts are kept");
    assertEquals(1, errors.getJsonObject(0).getInteger("attempt"));
    assertEquals("flaked on attempt 2", errors.getJsonObject(1).getString("message"));
    assertFalse(status(txId).containsKey("retry"), "no retry view once final");
  }

  @Test
  void a_non_retryable_failure_ends_the_transaction_after_one_attempt() {
    String txId = node.start("picky", new JsonObject());
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.FAILED, done.status());
    assertEquals("flaked on attempt 1", done.note());
    assertEquals(1, attemptsOf(txId));
    assertEquals("bad-input", status(txId).getJsonArray("errors").getJsonObject(0).getString("code"));
  }

  @Test
  void the_last_attempt_fails_the_transaction_with_every_attempts_error_kept() {
    String txId = node.start("hopeless", new JsonObject());
    waitingFor(txId, 2);
    clock.advance(Duration.ofSeconds(1));
    waitingFor(txId, 3);
    clock.advance(Duration.ofSeconds(2));
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.FAILED, done.status());
    assertEquals("flaked on attempt 3 (attempt 3 of 3)", done.note());
    assertEquals(3, attemptsOf(txId));
    JsonArray errors = status(txId).getJsonArray("errors");
    assertEquals(3, errors.size());
    for (int i = 0; i < 3; i++) {
      assertEquals(i + 1, errors.getJsonObject(i).getInteger("attempt"));
      assertEquals(2, errors.getJsonObject(i).getInteger("step"));
    }
  }

  @Test
  void a_timeout_counts_as_a_failed_attempt() {
    String txId = node.start("slow", new JsonObject());
    JsonObject waiting = waitingFor(txId, 2);
    assertEquals("timeout", waiting.getJsonObject("retry").getJsonObject("lastError").getString("code"));
    clock.advance(Duration.ofSeconds(1));
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.TIMEOUT, done.status());
    assertTrue(done.note().endsWith("(attempt 2 of 2)"), done.note());
    assertEquals(2, steps.held.size(), "the step was called once per attempt");
  }
}
