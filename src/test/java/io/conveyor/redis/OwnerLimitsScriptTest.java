package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.conveyor.model.Dequeued;
import io.conveyor.model.StartRequest;
import io.conveyor.testing.ScriptHarness;
import io.conveyor.testing.ScriptTest;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An owner's limits (set through OwnerStore, as the admin API does) at dequeue, beside its pipeline's: a run
 * holds a slot of each capped limit it is under, what has no room is held under the limit at fault, and a
 * dead node's runs, put back by the reaper, free every slot they held.
 */
class OwnerLimitsScriptTest extends ScriptTest {
  private static final Duration PERIOD = Duration.ofSeconds(1);

  private void capped(int pipelineCap) {
    h.pipeline("order", "v1", "shop", true);
    for (int p : h.keys.all()) {
      cmd("HSET", h.keys.pipelineInPartitionH(p, "order"), "cap", pipelineCap);
    }
  }

  private String start(String name, String owner) {
    String txId = ScriptHarness.txId(0, name);
    assertEquals(Code.OK, h.store.queue.start(new QueueStore.NewTx(txId, new StartRequest("order", owner, null,
        new JsonObject(), new JsonObject()), "shop"), PERIOD).await().code());
    return txId;
  }

  private List<String> take(String node, int max) {
    return h.store.queue.dequeue(0, "shop", node, max).await().stream().map(Dequeued::txId).toList();
  }

  private String runs(String limit) {
    var v = cmd("HGET", h.keys.qRunH(0, "shop"), limit);
    return v == null ? null : v.toString();
  }

  @Test
  void an_owner_cap_holds_its_owners_work_under_its_name_and_others_go_on() {
    capped(100);
    h.store.owners.put("acme", new OwnerStore.Limits(null, 1, null, 0)).await();
    String a1 = start("a1", "acme");
    String a2 = start("a2", "acme");
    String b1 = start("b1", "bolt");
    assertEquals(List.of(a1, b1), take("node-1", 10));
    assertEquals("1", runs("@acme"));
    assertEquals("2", runs("order"), "both runs hold a slot of the pipeline's cap");
    assertEquals(List.of(a2), cmd("ZRANGE", h.keys.qHeldZ(0, "shop", "@acme"), 0, -1).stream()
        .map(Object::toString).toList());
    assertEquals("order @acme", cmd("HGET", h.keys.stateH(a1), "slotNames").toString());
    assertEquals("order", cmd("HGET", h.keys.stateH(b1), "slotNames").toString());

    // the owner's run ends: its slots free and the held one is taken next
    assertEquals(List.of(Code.OK), h.store.run.complete("node-1", Duration.ofHours(1), List.of(
        new RunStore.Completion(a1, 1, io.conveyor.model.TxStatus.SUCCESS, new JsonObject(), null))).await());
    assertNull(runs("@acme"));
    assertEquals("1", runs("order"));
    assertEquals(List.of(a2), take("node-1", 10));
    assertEquals("1", runs("@acme"));
  }

  @Test
  void the_reaper_frees_the_pipeline_and_owner_slots_of_a_dead_nodes_runs() {
    capped(1);
    h.store.owners.put("acme", new OwnerStore.Limits(null, 1, null, 0)).await();
    String a1 = start("a1", "acme");
    String a2 = start("a2", "acme");
    cmd("ZADD", h.keys.nodesZ(), 1, "node-dead"); // registered, no heartbeat: the reaper judges it dead
    assertEquals(List.of(a1), take("node-dead", 10));
    assertEquals("1", runs("order"));
    assertEquals("1", runs("@acme"));
    assertEquals(1L, cmd("ZCARD", h.keys.qHeldZ(0, "shop", "order")).toLong(), "held by the first limit at fault");

    LivenessStore.Reaped reaped = h.store.liveness.reap(true, Duration.ofSeconds(10)).await();
    assertEquals(1, reaped.recovered().get("node-dead"));
    assertNull(runs("order"), "the dead run's pipeline slot is free");
    assertNull(runs("@acme"), "and its owner slot");
    assertEquals(1L, cmd("LLEN", h.keys.qRingL(0, "shop")).toLong(), "the group is rung for its held work");

    // a live node takes one of the two (the cap is 1), and the other stays held
    List<String> next = take("node-live", 10);
    assertEquals(1, next.size());
    assertEquals("1", runs("order"));
    assertEquals("1", runs("@acme"));
    long held = cmd("ZCARD", h.keys.qHeldZ(0, "shop", "order")).toLong()
        + cmd("ZCARD", h.keys.qHeldZ(0, "shop", "@acme")).toLong() + cmd("ZCARD", h.keys.qInZ(0, "shop")).toLong();
    assertEquals(1L, held, "the other waits: " + (next.contains(a1) ? a2 : a1));
  }

  @Test
  void an_owner_rate_gives_a_tenth_of_a_seconds_worth_then_tokens_as_the_clock_moves() {
    h.pipeline("order", "v1", "shop", true);
    // twenty a second in this partition (each of P partitions takes 1/P of the rate): two at once, one each 50 ms
    h.store.owners.put("acme", new OwnerStore.Limits(null, null, 20 * h.keys.partitions() + "/s", 0)).await();
    for (int i = 0; i < 8; i++) {
      start("a" + i, "acme");
    }
    String b = start("b", "bolt");
    List<String> first = take("node-1", 10);
    assertEquals(3, first.size(), "two of acme's and bolt's: " + first);
    assertEquals(b, first.get(2));
    assertEquals(6L, cmd("ZCARD", h.keys.qHeldZ(0, "shop", "@acme")).toLong());
    h.clock.advance(Duration.ofMillis(50));
    assertEquals(1, take("node-1", 10).size());
    h.clock.advance(Duration.ofSeconds(10));
    assertEquals(2, take("node-1", 10).size(), "a tenth of a second's worth at most, though three are held");
    assertEquals(3L, cmd("ZCARD", h.keys.qHeldZ(0, "shop", "@acme")).toLong());
  }

  @Test
  void limits_set_clear_and_reach_every_partition() {
    h.store.owners.put("acme", new OwnerStore.Limits(3, 20, "100/s", 0)).await();
    OwnerStore.Limits l = h.store.owners.get("acme").await();
    assertEquals(3, l.weight());
    assertEquals(20, l.maxConcurrency());
    assertEquals("100/s", l.rateLimit());
    for (int p : h.keys.all()) {
      assertEquals("20", cmd("HGET", h.keys.ownerInPartitionH(p, "acme"), "cap").toString());
      assertEquals("100.0", cmd("HGET", h.keys.ownerInPartitionH(p, "acme"), "rate").toString());
    }
    assertEquals(new JsonObject().put("acme", new JsonObject().put("weight", 3).put("maxConcurrency", 20)
        .put("rateLimit", "100/s")), h.store.owners.list().await());

    h.store.owners.put("acme", new OwnerStore.Limits(null, null, null, 0)).await();
    assertEquals(new JsonObject(), h.store.owners.list().await());
    for (int p : h.keys.all()) {
      assertNull(cmd("HGET", h.keys.ownerInPartitionH(p, "acme"), "cap"));
    }
  }
}
