package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.bus.Addresses;
import io.conveyor.bus.MemoryJudged;
import io.conveyor.bus.Messages;
import io.conveyor.model.TxException;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The start path heeds the memory watcher's verdict: while it says a partition's Redis is full, a start over the
 * event bus is refused with 503 redis-memory before anything is written; once it says memory is below the
 * low-water mark, starts are taken again. The verdicts are published by hand (the node's own watcher checks once,
 * at start, on a Redis with no maxmemory: nothing is full).
 */
class MemoryGuardTest {
  private TestNode node;
  private EventBus bus;

  @BeforeEach
  void startNode() {
    node = new TestNode().set("REDIS_MEMORY_CHECK_INTERVAL", "1h")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'paid':true}}}]}")
        .start(new TestSteps().registry());
    bus = node.node().vertx().eventBus();
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private void judge(boolean full) {
    MemoryJudged verdict = new MemoryJudged(node.keys.all().stream()
        .map(p -> new MemoryJudged.Partition(p, full ? 90L << 20 : 10L << 20, 100L << 20, full)).toList());
    bus.publish(Addresses.REDIS_MEMORY_JUDGED, Messages.encode(verdict), new DeliveryOptions().setLocalOnly(true));
  }

  /** A start over the bus: its summary, or the problem it was refused with. */
  private JsonObject start() {
    return bus.<JsonObject>request(Addresses.TX_START, new JsonObject().put("type", "order").put("owner", "acme"),
            new DeliveryOptions().addHeader("apiKey", io.conveyor.testing.KeyedApi.CLIENT))
        .map(m -> m.body()).recover(e -> io.vertx.core.Future.succeededFuture(
            TxException.fromJson(new JsonObject(((ReplyException) e).getMessage())).toJson()
                .put("code", ((ReplyException) e).failureCode())))
        .await();
  }

  @Test
  void the_watcher_reads_the_redis_of_every_partition_at_start_and_shows_it_in_the_metrics() {
    String metrics = node.node().metrics().scrape();
    for (int p : node.keys.all()) {
      // no maxmemory on the test's Redis and no budget: no guard, ratio 0, not full
      assertTrue(metrics.contains("conveyor_redis_memory_ratio{partition=\"" + p + "\"} 0.0"), metrics);
      assertTrue(metrics.contains("conveyor_redis_memory_full{partition=\"" + p + "\"} 0.0"), metrics);
    }
  }

  @Test
  void a_start_while_redis_is_judged_full_is_refused_with_redis_memory_and_writes_nothing() {
    judge(true);
    JsonObject refused = Eventually.until(Duration.ofSeconds(10), "a start refused for memory", this::start,
        r -> "redis-memory".equals(r.getString("type")));
    assertEquals(503, refused.getInteger("code"));
    assertEquals(3600, refused.getInteger("retryAfter"), "the check interval: the earliest the verdict changes");
    assertTrue(refused.getString("detail").startsWith("Redis is full: its memory is at 90 % of 100 MiB "
        + "(redis.memoryHighWater 85 %)"), refused.getString("detail"));
    String txId = refused.getString("txId");
    assertNull(node.store.reads.getState(txId).await(), "nothing of " + txId + " was written");
    assertTrue(node.node().metrics().scrape().contains("conveyor_redis_memory_refused_total"));
  }

  @Test
  void starts_are_taken_again_once_memory_is_judged_below_the_low_water_mark() {
    judge(true);
    Eventually.until(Duration.ofSeconds(10), "a start refused for memory", this::start,
        r -> "redis-memory".equals(r.getString("type")));
    judge(false);
    JsonObject started = Eventually.until(Duration.ofSeconds(10), "a start taken again", this::start,
        r -> r.getValue("status") instanceof String);
    assertEquals("success", node.awaitFinal(started.getString("txId")).status().wire());
  }
}
