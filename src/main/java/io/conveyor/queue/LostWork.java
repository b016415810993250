package io.conveyor.queue;

import io.conveyor.redis.QueueStore;
import io.vertx.core.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts back on their queues, attempt raised, the transactions this node holds in inflightZ but does not run:
 * what a lost dequeue reply or a lost start reply (a hand-off) left, what came while the node was fenced, or,
 * at the end of a stop, everything still held. Used by the dequeue verticle on its own context.
 */
final class LostWork {
  private static final Logger log = LoggerFactory.getLogger(LostWork.class);
  private final QueueStore store;
  private final String nodeId;
  private final WorkerSlots slots;

  LostWork(QueueStore store, String nodeId, WorkerSlots slots) {
    this.store = store;
    this.nodeId = nodeId;
    this.slots = slots;
  }

  /** What is held but not run goes back; how many, logged as what was lost when any. */
  Future<Integer> putBack(String lost) {
    return logged(store.requeueLost(nodeId, slots.running()), lost);
  }

  /** The same in one partition only: a take in another may be out meanwhile, and its partition may hang. */
  Future<Integer> putBack(int partition, String lost) {
    return logged(store.requeueLost(nodeId, slots.running(), false, java.util.List.of(partition)), lost);
  }

  private static Future<Integer> logged(Future<Integer> putBack, String lost) {
    return putBack.onSuccess(n -> {
      if (n > 0) {
        log.info("put {} transactions {} back on their queues", n, lost);
      }
    });
  }

  /**
   * The node stopped: what did not finish in time goes back for another node to run (never fails); what still ran
   * here is marked as possibly run (a step declared not idempotent then ends maybe-ran rather than run twice).
   */
  Future<Integer> putBackAll() {
    return store.requeueLost(nodeId, slots.running(), true).map(n -> {
      if (n > 0) {
        log.warn("stopped with {} transactions unfinished: put back on their queues", n);
      }
      return n;
    }).recover(e -> {
      log.warn("could not put back unfinished work ({}); the reaper will", e.getMessage());
      return Future.succeededFuture(0);
    });
  }
}
