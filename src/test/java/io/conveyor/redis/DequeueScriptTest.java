package io.conveyor.redis;

import io.conveyor.testing.TestRedis;
import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.model.Dequeued;
import io.conveyor.testing.ScriptTest;
import java.util.List;
import org.junit.jupiter.api.Test;

class DequeueScriptTest extends ScriptTest {

  private void queued(String txId, String queue) {
    cmd("HSET", h.keys.stateH(txId), "processingState", "queued", "attempt", 3, "type", "order", "version", "v1",
        "step", 0, "input", "{\"id\":\"" + txId + "\"}", "owner", "acme", "externalId", "", "metadata", "{}",
        "created", 5, "status", "running");
    if (queue.contains("qInZ")) {
      TestRedis.queueIn(queue, txId);
    } else {
      cmd("RPUSH", queue, txId);
    }
  }

  private List<String> ids(List<Dequeued> txs) {
    return txs.stream().map(Dequeued::txId).toList();
  }

  @Test
  void dequeue_takes_admin_before_out_before_in() {
    queued("tx-in", h.keys.qInZ(0, "g"));
    queued("tx-out", h.keys.qOutL(0, "g"));
    queued("tx-admin", h.keys.qAdminL(0, "g"));
    List<Dequeued> got = h.store.queue.dequeue(0, "g", "node-a", 10).await();
    assertEquals(List.of("tx-admin", "tx-out", "tx-in"), ids(got));
    assertEquals(List.of("admin", "out", "in"), got.stream().map(Dequeued::queue).toList());
  }

  @Test
  void dequeue_never_takes_more_than_the_free_slots() {
    for (int i = 0; i < 5; i++) {
      queued("tx-" + i, h.keys.qInZ(0, "g"));
    }
    assertEquals(List.of("tx-0", "tx-1"), ids(h.store.queue.dequeue(0, "g", "node-a", 2).await()));
    assertEquals(3, cmd("ZCARD", h.keys.qInZ(0, "g")).toInteger());
    assertEquals(2, cmd("ZCARD", h.keys.processingZ(0)).toInteger());
  }

  @Test
  void dequeue_raises_the_attempt_and_records_the_node_in_processing_and_inflight() {
    queued("tx-1", h.keys.qInZ(0, "g"));
    Dequeued d = h.store.queue.dequeue(0, "g", "node-a", 10).await().get(0);
    assertEquals(4, d.attempt());
    assertEquals("{\"id\":\"tx-1\"}", d.stepInput().encode());
    assertEquals(0, d.step());
    assertEquals("processing", cmd("HGET", h.keys.stateH("tx-1"), "processingState").toString());
    assertEquals("node-a", cmd("HGET", h.keys.stateH("tx-1"), "node").toString());
    assertEquals("4", cmd("HGET", h.keys.stateH("tx-1"), "attempt").toString());
    assertEquals(h.clock.millis(), cmd("ZSCORE", h.keys.processingZ(0), "tx-1").toLong());
    assertEquals(h.clock.millis(), cmd("ZSCORE", h.keys.inflightZ(0, "node-a"), "tx-1").toLong());
  }

  @Test
  void a_resumed_transaction_gets_its_checkpointed_step_and_data() {
    queued("tx-1", h.keys.qInZ(0, "g"));
    cmd("HSET", h.keys.stateH("tx-1"), "step", 2, "data", "{\"after\":2}");
    Dequeued d = h.store.queue.dequeue(0, "g", "node-a", 10).await().get(0);
    assertEquals(2, d.step());
    assertEquals("{\"after\":2}", d.stepInput().encode());
  }

  @Test
  void an_entry_that_is_not_queued_is_dropped_not_run() {
    queued("tx-1", h.keys.qInZ(0, "g"));
    cmd("HSET", h.keys.stateH("tx-1"), "processingState", "processing");
    TestRedis.queueIn(h.keys.qInZ(0, "g"), "tx-gone");
    queued("tx-2", h.keys.qInZ(0, "g"));
    assertEquals(List.of("tx-2"), ids(h.store.queue.dequeue(0, "g", "node-a", 10).await()));
    assertEquals(0, cmd("ZCARD", h.keys.qInZ(0, "g")).toInteger());
    assertEquals("3", cmd("HGET", h.keys.stateH("tx-1"), "attempt").toString());
  }

  @Test
  void a_full_take_with_work_left_rings_another_node_and_an_empty_queue_does_not() {
    for (int i = 0; i < 3; i++) {
      queued("tx-" + i, h.keys.qInZ(0, "g"));
    }
    h.store.queue.dequeue(0, "g", "node-a", 2).await();
    assertEquals(1, cmd("LLEN", h.keys.qRingL(0, "g")).toInteger());
    cmd("DEL", h.keys.qRingL(0, "g"));
    h.store.queue.dequeue(0, "g", "node-a", 2).await();
    assertEquals(0, cmd("LLEN", h.keys.qRingL(0, "g")).toInteger());
  }

  @Test
  void requeue_puts_back_what_a_node_holds_but_does_not_run_and_leaves_what_it_runs() {
    for (String id : List.of("tx-run", "tx-lost")) {
      queued(id, h.keys.qInZ(0, "g"));
      cmd("HSET", h.keys.stateH(id), "group", "g");
    }
    h.store.queue.dequeue(0, "g", "node-a", 10).await();
    cmd("DEL", h.keys.qRingL(0, "g"));
    assertEquals(1, h.store.queue.requeueLost("node-a", List.of(new QueueStore.Running("tx-run", 4))).await());
    assertEquals(List.of("tx-lost"), TestRedis.inQueue(h.keys.qInZ(0, "g")));
    assertEquals("queued", cmd("HGET", h.keys.stateH("tx-lost"), "processingState").toString());
    assertEquals("processing", cmd("HGET", h.keys.stateH("tx-run"), "processingState").toString());
    assertEquals(1, cmd("ZCARD", h.keys.inflightZ(0, "node-a")).toInteger());
    assertEquals(1, cmd("ZCARD", h.keys.processingZ(0)).toInteger());
    assertEquals(1, cmd("LLEN", h.keys.qRingL(0, "g")).toInteger());
    // requeue raised the attempt (4 → 5), fencing whatever the lost reply had handed out; dequeue raises it again
    assertEquals("5", cmd("HGET", h.keys.stateH("tx-lost"), "attempt").toString());
    assertEquals(6, h.store.queue.dequeue(0, "g", "node-b", 10).await().get(0).attempt());
  }

  @Test
  void requeue_puts_back_a_later_attempt_held_here_while_the_old_run_of_it_has_not_ended() {
    queued("tx-1", h.keys.qInZ(0, "g"));
    cmd("HSET", h.keys.stateH("tx-1"), "group", "g");
    assertEquals(4, h.store.queue.dequeue(0, "g", "node-a", 1).await().get(0).attempt()); // runs on node-a
    // taken over (reap.lua), then taken again by node-a, whose old run of it goes on until its next write is
    // refused: the dequeue's reply came while node-a was fenced, so attempt 6 runs nowhere
    cmd("DEL", h.keys.inflightZ(0, "node-a"));
    cmd("HSET", h.keys.stateH("tx-1"), "processingState", "queued", "attempt", 5);
    TestRedis.queueIn(h.keys.qInZ(0, "g"), "tx-1");
    assertEquals(6, h.store.queue.dequeue(0, "g", "node-a", 1).await().get(0).attempt());
    cmd("DEL", h.keys.qRingL(0, "g"));

    assertEquals(0, h.store.queue.requeueLost("node-a", List.of(new QueueStore.Running("tx-1", 6))).await(),
        "a run of the attempt the state holds is left alone");
    assertEquals(1, h.store.queue.requeueLost("node-a", List.of(new QueueStore.Running("tx-1", 4))).await(),
        "the old run does not hold the later attempt: it goes back");
    assertEquals("queued", cmd("HGET", h.keys.stateH("tx-1"), "processingState").toString());
    assertEquals("7", cmd("HGET", h.keys.stateH("tx-1"), "attempt").toString());
    assertEquals(List.of("tx-1"), TestRedis.inQueue(h.keys.qInZ(0, "g")));
    assertEquals(0, cmd("ZCARD", h.keys.inflightZ(0, "node-a")).toInteger());
    assertEquals(1, cmd("LLEN", h.keys.qRingL(0, "g")).toInteger(), "an idle node is rung");
    assertEquals(null, cmd("HGET", h.keys.stateH("tx-1"), "takenOver"), "attempt 6 never ran: not marked");
  }

  @Test
  void a_lost_dequeue_reply_is_not_a_takeover_but_what_a_stopping_node_gives_back_is_and_a_rerun_counts_its_run() {
    for (String id : List.of("tx-lost", "tx-stopped")) {
      queued(id, h.keys.qInZ(0, "g"));
      cmd("HSET", h.keys.stateH(id), "group", "g", "step", 2);
    }
    h.store.queue.dequeue(0, "g", "node-a", 1).await();
    assertEquals(1, h.store.queue.requeueLost("node-a", List.of()).await());
    Dequeued lost = h.store.queue.dequeue(0, "g", "node-b", 1).await().get(0);
    assertEquals(-1, lost.takenOver(), "its step was never called: nothing marked");
    assertEquals(1, lost.run());
    h.store.queue.dequeue(0, "g", "node-b", 10).await(); // the other one, now held by node-b too, which stops
    assertEquals(2, h.store.queue.requeueLost("node-b", List.of(new QueueStore.Running("tx-stopped", 4)), true).await(), "all goes back");
    List<Dequeued> back = h.store.queue.dequeue(0, "g", "node-c", 10).await();
    assertEquals(java.util.Map.of("tx-lost", -1, "tx-stopped", 2), back.stream().collect(java.util.stream.Collectors
        .toMap(Dequeued::txId, Dequeued::takenOver)), "only the one it ran is marked, at its step (index 2)");
    cmd("HSET", h.keys.stateH("tx-lost"), "run", 3);
    cmd("HSET", h.keys.stateH("tx-lost"), "processingState", "queued");
    TestRedis.queueIn(h.keys.qInZ(0, "g"), "tx-lost");
    assertEquals(3, h.store.queue.dequeue(0, "g", "node-c", 10).await().get(0).run());
  }

  @Test
  void one_dequeue_pops_a_bounded_number_of_stale_entries_and_rings_so_the_rest_follow_at_once() {
    for (int i = 0; i < 1500; i++) {
      TestRedis.queueIn(h.keys.qInZ(0, "g"), "tx-stale-" + i); // no state: dropped when popped
    }
    queued("tx-real", h.keys.qInZ(0, "g"));
    assertEquals(List.of(), ids(h.store.queue.dequeue(0, "g", "node-a", 1).await()));
    assertEquals(1500 + 1 - 1001, cmd("ZCARD", h.keys.qInZ(0, "g")).toInteger(), "max + 1000 entries popped, no more");
    assertEquals(1, cmd("LLEN", h.keys.qRingL(0, "g")).toInteger(), "work is left: the group is rung");
    assertEquals(List.of("tx-real"), ids(h.store.queue.dequeue(0, "g", "node-a", 1).await()));
  }
}
