package io.conveyor.redis;

import io.conveyor.testing.TestRedis;
import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.conveyor.model.Dequeued;
import io.conveyor.testing.ScriptTest;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** sleep, wake and set-switch, with the clock moved by hand. */
class SleepScriptTest extends ScriptTest {
  private Dequeued tx;

  @BeforeEach
  void arrange() {
    cmd("HSET", h.keys.stateH("tx-1"), "processingState", "queued", "attempt", 0, "status", "running", "owner", "acme",
        "group", "g", "type", "p", "version", "v", "step", 2, "data", "{\"at\":2}", "metadata", "{}", "created", 1);
    TestRedis.queueIn(h.keys.qInZ(0, "g"), "tx-1");
    tx = h.store.queue.dequeue(0, "g", "node-a", 1).await().get(0);
  }

  private List<String> queue() {
    return TestRedis.inQueue(h.keys.qInZ(0, "g"));
  }

  @Test
  void a_sleeper_leaves_its_worker_and_is_woken_when_due_never_before() {
    long wakeAt = h.clock.millis() + 60_000;
    assertEquals(Code.SLEEPING, h.store.run.sleep(tx, "node-a", "g", wakeAt, null).await());
    assertEquals("sleeping", cmd("HGET", h.keys.stateH("tx-1"), "processingState").toString());
    assertEquals(wakeAt, cmd("ZSCORE", h.keys.sleepingZ(0), "tx-1").toLong());
    assertNull(cmd("ZSCORE", h.keys.processingZ(0), "tx-1"));
    assertNull(cmd("ZSCORE", h.keys.inflightZ(0, "node-a"), "tx-1"));

    h.clock.advance(Duration.ofMillis(59_999));
    assertEquals(0, h.store.control.wake(0, 100).await());
    assertEquals(List.of(), queue());
    h.clock.advance(Duration.ofMillis(1));
    assertEquals(1, h.store.control.wake(0, 100).await());
    assertEquals(List.of("tx-1"), queue());
    Dequeued again = h.store.queue.dequeue(0, "g", "node-b", 1).await().get(0);
    assertEquals(2, again.step());
    assertEquals(new JsonObject().put("at", 2), again.stepInput());
    assertEquals(1, again.retry());
  }

  @Test
  void setting_the_switch_a_transaction_sleeps_on_wakes_it_at_once_with_the_value() {
    h.store.run.sleep(tx, "node-a", "g", h.clock.millis() + 3_600_000, "approve").await();
    assertEquals(Code.SET, h.store.control.setSwitch("tx-1", "acme", "other", 1).await());
    assertEquals(List.of(), queue());
    assertEquals(Code.SET, h.store.control.setSwitch("tx-1", "acme", "approve", new JsonObject().put("by", "ann")).await());
    assertEquals(List.of("tx-1"), queue());
    assertNull(cmd("ZSCORE", h.keys.sleepingZ(0), "tx-1"));
    Dequeued woken = h.store.queue.dequeue(0, "g", "node-b", 1).await().get(0);
    assertEquals(new JsonObject().put("other", 1).put("approve", new JsonObject().put("by", "ann")), woken.switches());
  }

  @Test
  void a_switch_changed_after_the_step_saw_it_makes_the_wait_return_at_once() {
    // the step runs having seen no switch; the switch is set before it asks to sleep on it
    assertEquals(Code.SET, h.store.control.setSwitch("tx-1", "acme", "approve", true).await());
    assertEquals(Code.REQUEUED, h.store.run.sleep(tx, "node-a", "g", h.clock.millis() + 3_600_000, "approve").await());
    assertEquals(List.of("tx-1"), queue());
    assertNull(cmd("ZSCORE", h.keys.sleepingZ(0), "tx-1"));
    // once the step has seen it (dequeue acknowledges), waiting on it sleeps again
    Dequeued seen = h.store.queue.dequeue(0, "g", "node-a", 1).await().get(0);
    assertEquals(true, seen.switches().getBoolean("approve"));
    assertEquals(Code.SLEEPING, h.store.run.sleep(seen, "node-a", "g", h.clock.millis() + 1000, "approve").await());
  }

  @Test
  void a_switch_on_another_owners_or_an_ended_transaction_is_refused() {
    assertEquals(Code.NOT_FOUND, h.store.control.setSwitch("tx-1", "globex", "approve", true).await());
    cmd("HSET", h.keys.stateH("tx-1"), "processingState", "complete");
    assertEquals(Code.ALREADY_FINAL, h.store.control.setSwitch("tx-1", "acme", "approve", true).await());
    assertEquals(0, cmd("HEXISTS", h.keys.stateH("tx-1"), "switches").toInteger());
  }
}
