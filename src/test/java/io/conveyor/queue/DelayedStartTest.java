package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxException;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** startAt and delay: a transaction is scheduled, off every queue, until its time; cancellable meanwhile. */
class DelayedStartTest {
  private final TestSteps steps = new TestSteps();
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private TestNode node;

  @BeforeEach
  void start() {
    node = new TestNode().clock(clock).set("REAPER_INTERVAL", "20ms")
        .pipeline("later", "{'name':'later','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/record'}]}")
        .start(steps.registry());
  }

  @AfterEach
  void stop() {
    node.close();
  }

  private TxSummary start(JsonObject extra) {
    return node.transactions.start(new JsonObject().put("type", "later").put("owner", "acme")
        .put("input", new JsonObject()).mergeIn(extra)).await();
  }

  @Test
  void a_delayed_start_is_scheduled_until_its_time_then_runs() {
    TxSummary s = start(new JsonObject().put("delay", "2s"));
    long due = s.created().toEpochMilli() + 2_000;
    assertEquals("scheduled", s.processingState());
    assertEquals(Instant.ofEpochMilli(due).toString(), s.toJson().getString("startAt"));
    assertEquals(due, cmd("ZSCORE", node.keys.sleepingZ(node.keys.partitionOf(s.txId())), s.txId()).toLong());
    assertEquals("scheduled", node.transactions.status(s.txId(), "acme").await().processingState());
    assertEquals(0, node.total("ZCARD", p -> node.keys.qInZ(p, "master")), "on no queue meanwhile");

    clock.advance(Duration.ofMillis(due - clock.millis()));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(s.txId()).status());
    assertEquals(1, steps.recorded.size());
  }

  @Test
  void a_start_at_a_past_time_starts_at_once_and_a_cancelled_one_never_runs() {
    TxSummary now = start(new JsonObject().put("startAt", Instant.ofEpochMilli(clock.millis() - 1).toString()));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(now.txId()).status());

    TxSummary later = start(new JsonObject().put("startAt", Instant.ofEpochMilli(clock.millis() + 60_000).toString()));
    assertEquals(TxStatus.CANCELLED, node.transactions.cancel(later.txId(), "acme").await().status());
    clock.advance(Duration.ofMinutes(5));
    assertEquals(0, node.total("ZCARD", node.keys::sleepingZ));
    assertEquals(TxStatus.CANCELLED, node.awaitFinal(later.txId()).status());
    assertEquals(1, steps.recorded.size(), "only the first ran");
  }

  @Test
  void a_bad_start_time_is_refused_naming_the_field() {
    TxException both = assertThrows(TxException.class, () -> start(new JsonObject().put("delay", "1s")
        .put("startAt", Instant.ofEpochMilli(clock.millis()).toString())));
    assertEquals("delay", both.field());
    assertEquals("delay", assertThrows(TxException.class, () -> start(new JsonObject().put("delay", "soon")))
        .field());
    assertEquals("startAt", assertThrows(TxException.class, () -> start(new JsonObject().put("startAt", "tomorrow")))
        .field());
    TxException far = assertThrows(TxException.class, () -> start(new JsonObject().put("startAt",
        Instant.ofEpochMilli(clock.millis()).plus(Duration.ofDays(400)).toString())));
    assertTrue(far.getMessage().contains("at most 366 days"), far.getMessage());
    assertEquals(0, steps.recorded.size());
  }
}
