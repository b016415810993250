package io.conveyor.redis;

import io.conveyor.testing.TestRedis;
import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.conveyor.model.Dequeued;
import io.conveyor.model.TxStatus;
import io.conveyor.testing.ScriptTest;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** hop, and the way complete hands a child's result back to its parent. */
class HopScriptTest extends ScriptTest {
  private Dequeued parent;

  @BeforeEach
  void arrange() {
    h.pipeline("ship", "v7", "warehouse", false);
    cmd("HSET", h.keys.stateH("tx-p"), "processingState", "queued", "attempt", 0, "status", "running", "owner", "acme",
        "metadata", "{\"m\":1}", "group", "shop", "type", "order", "version", "v1", "step", 1, "input", "{}",
        "created", 1);
    TestRedis.queueIn(h.keys.qInZ(0, "shop"), "tx-p");
    parent = h.store.queue.dequeue(0, "shop", "node-a", 1).await().get(0);
  }

  private RunStore.HopReply hop(Dequeued p, String group) {
    return h.store.run.hop(p, "node-a", 1, "tx-c", "ship", new JsonObject().put("parcel", 1), group, null).await();
  }

  @Test
  void hop_queues_the_child_in_its_group_and_the_parent_leaves_its_worker_to_wait() {
    assertEquals(Code.OK, hop(parent, "warehouse").code());
    String child = h.keys.stateH("tx-c");
    assertEquals("queued", cmd("HGET", child, "processingState").toString());
    assertEquals("acme", cmd("HGET", child, "owner").toString());
    assertEquals("v7", cmd("HGET", child, "version").toString());
    assertEquals("tx-p", cmd("HGET", child, "parentTxId").toString());
    assertEquals("shop", cmd("HGET", child, "parentGroup").toString());
    assertEquals("{\"parcel\":1}", cmd("HGET", child, "input").toString());
    assertEquals(List.of("tx-c"), TestRedis.inQueue(h.keys.qInZ(0, "warehouse")));
    assertEquals(1, cmd("LLEN", h.keys.qRingL(0, "warehouse")).toInteger());
    assertEquals("sleeping", cmd("HGET", h.keys.stateH("tx-p"), "processingState").toString());
    assertEquals("tx-c", cmd("HGET", h.keys.stateH("tx-p"), "waitingFor").toString());
    assertNull(cmd("ZSCORE", h.keys.processingZ(0), "tx-p"));
    assertNull(cmd("ZSCORE", h.keys.inflightZ(0, "node-a"), "tx-p"));
  }

  @Test
  void hop_refuses_an_older_attempt_an_unknown_pipeline_and_a_wrong_group_writing_nothing() {
    Dequeued stale = new Dequeued("tx-p", parent.attempt() - 1, "order", "v1", 1, new JsonObject(), "acme", null,
        new JsonObject(), 1, "in", null, 0, null, 1, null, 1, -1, null);
    assertEquals(Code.FENCED, hop(stale, "warehouse").code());
    assertEquals(Code.GROUP_CHANGED, hop(parent, "elsewhere").code());
    assertEquals("warehouse", hop(parent, "elsewhere").detail());
    assertEquals(Code.UNKNOWN_PIPELINE, h.store.run.hop(parent, "node-a", 1, "tx-c", "nope", new JsonObject(), "warehouse", null)
        .await().code());
    assertEquals(0, cmd("EXISTS", h.keys.stateH("tx-c")).toInteger());
    assertEquals("processing", cmd("HGET", h.keys.stateH("tx-p"), "processingState").toString());
  }

  @Test
  void a_completed_child_queues_its_parent_on_out_of_the_parents_group_with_its_result() {
    hop(parent, "warehouse");
    Dequeued child = h.store.queue.dequeue(0, "warehouse", "node-b", 1).await().get(0);
    h.store.run.complete("node-b", Duration.ofSeconds(60), List.of(new RunStore.Completion("tx-c", child.attempt(),
        TxStatus.FAILED, new JsonObject().put("why", "lost"), "no parcel"))).await();
    assertEquals(List.of("tx-p"), cmd("LRANGE", h.keys.qOutL(0, "shop"), 0, -1).stream().map(Object::toString).toList());
    Dequeued resumed = h.store.queue.dequeue(0, "shop", "node-a", 1).await().get(0);
    assertEquals("out", resumed.queue());
    assertEquals(1, resumed.step());
    assertEquals(new Dequeued.ChildResult(TxStatus.FAILED, new JsonObject().put("why", "lost"), "no parcel"),
        resumed.child());
    // once the parent goes past that step, the child's result is gone
    h.store.run.checkpoint("tx-p", resumed.attempt(), 2, new JsonObject(), null).await();
    assertEquals(0, cmd("HEXISTS", h.keys.stateH("tx-p"), "childStatus").toInteger());
  }
}
