package io.conveyor.redis;

import static io.conveyor.testing.ScriptHarness.txId;
import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.Dequeued;
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
 * start.lua's hand-off: a start of the offering node's group, when that group has nothing waiting and no limit
 * holds, is taken for the node in the start's own call (processing, attempt 1, in processingZ and the node's
 * inflightZ); anything else is queued as before, and the slots it did not use go back.
 */
class HandoffScriptTest extends ScriptTest {
  private static final Duration PERIOD = Duration.ofHours(6);
  private final Recorder node = new Recorder();

  @BeforeEach
  void arrange() {
    h.pipeline("order", "v1", "shop", true);
    h.pipeline("report", "v1", "back-office", true);
  }

  /** Offers slots slots, and records what it was handed and what it got back. */
  private static final class Recorder implements Handoff {
    int slots = 2;
    int reservedTotal;
    int returned;
    final List<Dequeued> handed = new ArrayList<>();
    int lost;

    @Override
    public String nodeId() {
      return "node-a";
    }

    @Override
    public String group() {
      return "shop";
    }

    @Override
    public io.vertx.core.Future<Integer> reserve(int n) {
      int granted = Math.min(n, slots);
      reservedTotal += granted;
      return io.vertx.core.Future.succeededFuture(granted);
    }

    @Override
    public void handed(int reserved, List<Dequeued> txs) {
      handed.addAll(txs);
      returned += reserved - txs.size();
    }

    @Override
    public void lost(int reserved) {
      lost += reserved;
    }
  }

  private QueueStore.NewTx tx(String name, String type) {
    // all in partition 0: one script call answers them all; the owner has a fair share of 10
    return new QueueStore.NewTx(txId(0, name), new StartRequest(type, "acme", null, new JsonObject().put("m", 1),
        new JsonObject().put("x", name)), "order".equals(type) ? "shop" : "back-office", Duration.ZERO, null, 10);
  }

  private List<Code> start(QueueStore.NewTx... txs) {
    return h.store.queue.start(List.of(txs), PERIOD, 0, 10, node).await().stream()
        .map(QueueStore.StartReply::code).toList();
  }

  private String state(String name, String field) {
    io.vertx.redis.client.Response r = cmd("HGET", h.keys.stateH(txId(0, name)), field);
    return r == null ? null : r.toString();
  }

  @Test
  void starts_of_an_idle_group_are_taken_for_the_node_up_to_its_offer_and_the_rest_queue() {
    assertEquals(List.of(Code.OK, Code.OK, Code.OK), start(tx("a", "order"), tx("b", "order"), tx("c", "order")));

    assertEquals(List.of(txId(0, "a"), txId(0, "b")), node.handed.stream().map(Dequeued::txId).toList());
    Dequeued a = node.handed.get(0);
    assertEquals(1, a.attempt());
    assertEquals("order", a.type());
    assertEquals("v1", a.version());
    assertEquals(0, a.step());
    assertEquals("{\"x\":\"a\"}", a.stepInput().encode());
    assertEquals("{\"m\":1}", a.metadata().encode());
    assertEquals("acme", a.owner());
    assertEquals(h.clock.millis(), a.created());
    assertEquals(0, node.returned);
    for (String name : List.of("a", "b")) {
      assertEquals("processing", state(name, "processingState"));
      assertEquals("node-a", state(name, "node"));
      assertEquals("1", state(name, "attempt"));
      assertNull(state(name, "share"), "a start taken at once holds no share of the in-queue");
      assertEquals(h.clock.millis(), cmd("ZSCORE", h.keys.processingZ(0), txId(0, name)).toLong());
      assertEquals(h.clock.millis(), cmd("ZSCORE", h.keys.inflightZ(0, "node-a"), txId(0, name)).toLong());
    }
    // the third found no slot offered: queued as before, with its share, and the group rung
    assertEquals("queued", state("c", "processingState"));
    assertEquals("in", state("c", "share"));
    assertEquals(List.of(txId(0, "c")), TestRedis.inQueue(h.keys.qInZ(0, "shop")));
    assertEquals(1, cmd("LLEN", h.keys.qRingL(0, "shop")).toInteger());
    assertEquals("1", cmd("HGET", h.keys.qFairH(0, "shop"), "acme").toString());
  }

  @Test
  void each_reply_says_how_its_start_went_in_as_start_lua_wrote_it() {
    QueueStore.NewTx later = tx("later", "order");
    StartRequest r = later.req();
    later = new QueueStore.NewTx(later.txId(), new StartRequest(r.type(), r.owner(), null, r.metadata(), r.input(),
        r.metadataJson(), r.inputJson(), null, null, Duration.ofMinutes(5), null), "shop", Duration.ZERO, null, 10);
    List<QueueStore.StartReply> replies = h.store.queue.start(List.of(tx("a", "order"), later, tx("c", "report")),
        PERIOD, 0, 10, node).await();

    assertEquals(List.of("processing", "scheduled", "queued"),
        replies.stream().map(QueueStore.StartReply::state).toList());
    List<String> names = List.of("a", "later", "c");
    for (int i = 0; i < names.size(); i++) {
      assertEquals(state(names.get(i), "processingState"), replies.get(i).state(), names.get(i));
    }
    assertEquals(h.clock.millis() + Duration.ofMinutes(5).toMillis(), replies.get(1).startAt());
    assertEquals(0, replies.get(0).startAt());
  }

  @Test
  void a_group_with_nothing_waiting_is_not_rung_when_everything_was_taken() {
    start(tx("a", "order"));
    assertEquals(1, node.handed.size());
    assertEquals(0, cmd("LLEN", h.keys.qRingL(0, "shop")).toInteger());
    assertEquals(0, cmd("ZCARD", h.keys.qInZ(0, "shop")).toInteger());
  }

  @Test
  void nothing_is_taken_while_work_waits_and_the_slots_go_back() {
    start(tx("a", "order"), tx("b", "order"), tx("c", "order")); // two taken, one queued
    node.handed.clear();
    node.returned = 0;
    h.clock.advance(Duration.ofMillis(1));
    start(tx("d", "order"));
    assertTrue(node.handed.isEmpty(), "work waits in the in-queue: a new start must not pass it");
    assertEquals(1, node.returned);
    assertEquals(List.of(txId(0, "c"), txId(0, "d")), TestRedis.inQueue(h.keys.qInZ(0, "shop")));
  }

  @Test
  void a_limit_a_pause_a_delay_or_another_group_keeps_a_start_on_its_queue() {
    cmd("HSET", h.keys.pipelineInPartitionH(0, "order"), "cap", 5);
    start(tx("capped", "order"));
    cmd("HDEL", h.keys.pipelineInPartitionH(0, "order"), "cap");
    cmd("ZPOPMIN", h.keys.qInZ(0, "shop"));

    cmd("HSET", h.keys.ownerInPartitionH(0, "acme"), "rate", 50);
    start(tx("rated", "order"));
    cmd("DEL", h.keys.ownerInPartitionH(0, "acme"));
    cmd("ZPOPMIN", h.keys.qInZ(0, "shop"));

    cmd("HSET", h.keys.groupH(0, "shop"), "state", "paused");
    start(tx("paused", "order"));
    cmd("DEL", h.keys.groupH(0, "shop"));
    cmd("ZPOPMIN", h.keys.qInZ(0, "shop"));

    QueueStore.NewTx later = tx("later", "order");
    StartRequest r = later.req();
    start(new QueueStore.NewTx(later.txId(), new StartRequest(r.type(), r.owner(), null, r.metadata(), r.input(),
        r.metadataJson(), r.inputJson(), null, null, Duration.ofMinutes(5), null), "shop", Duration.ZERO, null, 10));

    int reservedBefore = node.reservedTotal;
    start(tx("other", "report"));
    assertEquals(reservedBefore, node.reservedTotal, "a start of another group reserves nothing");

    assertTrue(node.handed.isEmpty(), "handed: " + node.handed);
    for (String name : List.of("capped", "rated", "paused")) {
      assertEquals("queued", state(name, "processingState"), name);
      assertEquals("0", state(name, "attempt"), name);
    }
    assertEquals("scheduled", state("later", "processingState"));
    assertEquals("queued", state("other", "processingState"));
    assertEquals(0, cmd("ZCARD", h.keys.inflightZ(0, "node-a")).toInteger());
  }
}
