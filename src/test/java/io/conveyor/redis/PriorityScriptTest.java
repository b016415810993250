package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.model.StartRequest;
import io.conveyor.testing.ScriptTest;
import io.conveyor.testing.TestRedis;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Priorities in a group's in-queue (start.lua, lib/queue.lua, dequeue.lua): a higher priority goes first, but
 * never ahead of work that has waited longer than its head start (priority x aging / 9).
 */
class PriorityScriptTest extends ScriptTest {
  private static final Duration PERIOD = Duration.ofHours(6);
  /** transactions.priorityAging of 90 s: 10 s per level, 90 s for priority 9. */
  private static final long STEP = 10_000;
  private int n;

  @BeforeEach
  void arrange() {
    h.pipeline("order", "v1", "shop", true);
    h.pipeline("urgent", "v1", "shop", true);
    for (int p : h.keys.all()) {
      cmd("HSET", h.keys.pipelineInPartitionH(p, "urgent"), "priority", "7");
    }
    cmd("HSET", h.keys.pipelineH("urgent"), "priority", "7");
  }

  /** Starts one transaction in partition 0 and answers its txId. */
  private String start(String type, Integer priority) {
    String txId = io.conveyor.testing.ScriptHarness.txId(0, String.format("%03d", n++));
    StartRequest req = new StartRequest(type, "acme", null, new JsonObject(), new JsonObject(), "{}", "{}", null, null,
        null, priority);
    assertEquals(Code.OK, h.store.queue.start(List.of(new QueueStore.NewTx(txId, req, "shop")), PERIOD, STEP, 0)
        .await().get(0).code());
    return txId;
  }

  private List<String> dequeueAll() {
    List<String> out = new ArrayList<>();
    h.store.queue.dequeue(0, "shop", "node-a", 100).await().forEach(d -> out.add(d.txId()));
    return out;
  }

  @Test
  void a_higher_priority_goes_ahead_of_lower_priority_work_queued_within_its_head_start() {
    String low1 = start("order", null);
    h.clock.advance(Duration.ofSeconds(6));
    String low2 = start("order", 0);
    h.clock.advance(Duration.ofSeconds(6));
    String high = start("order", 9); // 90 s head start: ahead of both
    String mid = start("order", 1); // 10 s: ahead of low2 (queued 6 s ago) but not of low1 (12 s ago)
    assertEquals(List.of(high, low1, mid, low2), dequeueAll());
    assertEquals("9", cmd("HGET", h.keys.stateH(high), "priority").toString());
  }

  @Test
  void work_that_waited_longer_than_the_head_start_is_not_overtaken() {
    String old = start("order", 0);
    h.clock.advance(Duration.ofSeconds(91));
    String high = start("order", 9);
    assertEquals(List.of(old, high), dequeueAll(), "priority 9 overtakes at most 90 s of waiting");
  }

  @Test
  void a_start_without_a_priority_takes_the_pipelines_and_its_order_within_a_batch_holds() {
    List<String> batch = new ArrayList<>();
    List<QueueStore.NewTx> txs = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      String txId = io.conveyor.testing.ScriptHarness.txId(0, String.format("b%02d-%s", 49 - i, i));
      batch.add(txId);
      txs.add(new QueueStore.NewTx(txId, new StartRequest("order", "acme", null, new JsonObject(), new JsonObject()),
          "shop"));
    }
    h.store.queue.start(txs, PERIOD, STEP, 0).await();
    String urgent = start("urgent", null);
    assertEquals("7", cmd("HGET", h.keys.stateH(urgent), "priority").toString());
    List<String> expected = new ArrayList<>(List.of(urgent));
    expected.addAll(batch);
    assertEquals(expected, TestRedis.inQueue(h.keys.qInZ(0, "shop")), "the batch in its order (not its ids')");
  }

  @Test
  void work_taken_back_from_a_node_goes_first_whatever_the_priorities() {
    String first = start("order", 0);
    String second = start("order", 9);
    assertEquals(2, dequeueAll().size());
    String waiting = start("order", 9);
    long attempt = Long.parseLong(cmd("HGET", h.keys.stateH(second), "attempt").toString());
    assertEquals(1, h.store.queue.requeueLost("node-a", List.of(new QueueStore.Running(second, attempt))).await(),
        "what it does not run goes back");
    assertEquals(List.of(first, waiting), TestRedis.inQueue(h.keys.qInZ(0, "shop")));
    assertEquals(List.of(first, waiting), dequeueAll());
  }
}
