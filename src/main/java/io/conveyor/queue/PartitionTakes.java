package io.conveyor.queue;

import io.conveyor.model.Dequeued;
import io.conveyor.redis.PartitionHealth;
import io.conveyor.redis.QueueStore;
import io.vertx.core.Future;
import java.util.List;

/**
 * The dequeues of one node's group, at most one out per partition: a take that hangs in one partition's Redis
 * (a failover, a long script) holds back only that partition's next take. A take out, or the put-back of what a lost
 * one took, keeps its partition busy until end(p). Each outcome feeds the node's PartitionHealth; work held by a rate
 * limit rings its partition when a token comes (HeldRings). Kept by the dequeue verticle on its own context.
 */
final class PartitionTakes {
  private final QueueStore store;
  private final HeldRings heldRings;
  private final PartitionHealth health;
  private final String group;
  private final String nodeId;
  private final boolean[] busy;
  private int out;

  PartitionTakes(QueueStore store, HeldRings heldRings, PartitionHealth health, String group, String nodeId,
                 int parts) {
    this.store = store;
    this.heldRings = heldRings;
    this.health = health;
    this.group = group;
    this.nodeId = nodeId;
    this.busy = new boolean[parts];
  }

  /** A take (or its put-back) is out in p. */
  boolean busy(int p) {
    return busy[p];
  }

  /** How many partitions have one out. */
  int out() {
    return out;
  }

  /** Takes up to max in p; p stays busy until end(p), whatever the answer. */
  Future<List<Dequeued>> take(int p, int max) {
    busy[p] = true;
    out++;
    return store.take(p, group, nodeId, max).map(t -> {
      if (t.heldReadyMs() > 0) {
        heldRings.ringIn(p, t.heldReadyMs());
      }
      return t.txs();
    }).onComplete(ar -> health.observe(p, ar));
  }

  /** The take in p, and the put-back after it if it failed, are over: another may go there. */
  void end(int p) {
    busy[p] = false;
    out--;
  }
}
