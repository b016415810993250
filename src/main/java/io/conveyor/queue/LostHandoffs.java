package io.conveyor.queue;

import io.vertx.core.Vertx;
import java.util.function.IntPredicate;

/**
 * Partitions where a start's hand-off to this node may have been lost: the start call failed, so whether it handed
 * work over is not known. What this node holds there but does not run goes back on its queue, partition by
 * partition, before a take goes there again. A partition whose put-back fails (its master failing over) stays held
 * and is tried again a second later, while the other partitions take on: one put-back over every partition had held
 * every take of the node until the dead master's failover ended (bench/chaos redis-cluster-master-kill: no
 * completion in any partition for 3 s). Kept by the dequeue verticle, on its context.
 */
final class LostHandoffs {
  private static final long RETRY_MS = 1000;
  private final Vertx vertx;
  private final LostWork lost;
  /** A put-back is due in the partition before a take goes there. */
  private final boolean[] held;
  /** Its put-back is out. */
  private final boolean[] sending;
  private int heldCount;
  private int out;
  private boolean retryTimer;

  LostHandoffs(Vertx vertx, LostWork lost, int parts) {
    this.vertx = vertx;
    this.lost = lost;
    this.held = new boolean[parts];
    this.sending = new boolean[parts];
  }

  /** The hand-off may have been lost in any partition: every one is held until put back. */
  void lostAll() {
    for (int p = 0; p < held.length; p++) {
      if (!held[p]) {
        held[p] = true;
        heldCount++;
      }
    }
  }

  boolean held(int p) {
    return held[p];
  }

  boolean any() {
    return heldCount > 0;
  }

  /** No put-back is out. */
  boolean idle() {
    return out == 0;
  }

  /**
   * Sends the put-back of each held partition where one may go now (mayGo: no take out there, no hand-off reserved,
   * either of which may bring work not yet running); ready hears each partition freed. What could not go or failed
   * is tried again a second later.
   */
  void recover(IntPredicate mayGo, Runnable ready) {
    boolean later = false;
    for (int p = 0; p < held.length; p++) {
      if (!held[p] || sending[p]) {
        continue;
      }
      if (!mayGo.test(p)) {
        later = true;
        continue;
      }
      int part = p;
      sending[p] = true;
      out++;
      lost.putBack(p, "of a start whose reply was lost").onComplete(r -> {
        sending[part] = false;
        out--;
        if (r.succeeded()) {
          held[part] = false;
          heldCount--;
          ready.run();
        } else {
          retry(mayGo, ready);
        }
      });
    }
    if (later) {
      retry(mayGo, ready);
    }
  }

  private void retry(IntPredicate mayGo, Runnable ready) {
    if (!retryTimer) {
      retryTimer = true;
      vertx.setTimer(RETRY_MS, t -> {
        retryTimer = false;
        recover(mayGo, ready);
      });
    }
  }
}
