package io.conveyor.queue;

import io.conveyor.model.Dequeued;
import io.conveyor.redis.QueueStore.Running;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The worker slots of one node, kept by its dequeue verticle on its own context: runs under way, completions
 * out, slots a start call holds for a hand-off, slots the dequeue out now asked for, and which transactions
 * run here. A take asks for at most workers less the runs and workers less the writes out, so runs stay
 * within workers and runs + writing within twice that.
 */
final class WorkerSlots {
  private final int workers;
  /**
   * The runs under way here (transaction and attempt), with how many of each: after a fence the node may take
   * back a transaction whose old run has not ended yet, and each run holds a worker slot until it ends. The
   * attempt tells them apart: a put-back of what is held but not run must not mistake the new one for the old.
   */
  private final Map<Running, Integer> running = new HashMap<>();
  /** Runs whose step is not done yet: each holds a worker slot. */
  private int runs;
  /** Runs whose completion is out (see ended): their slot is free, their write not landed yet. */
  private int writing;
  /** Slots start calls hold for a hand-off, until they answer (handed) or fail (lost). */
  private int reserved;
  /** What the dequeues out now asked for (one per partition at most, see DequeueVerticle). */
  private int asking;

  WorkerSlots(int workers) {
    this.workers = workers;
  }

  /** No slot to give, to a take or a start: every one is running, reserved or asked for, or too many writes are out. */
  boolean full() {
    return writing >= workers || free() <= 0;
  }

  private int free() {
    return workers - runs - reserved - asking;
  }

  /** A dequeue goes out: how many it asks for (maybe 0), held until it answers (see taken). */
  int ask() {
    return ask(1);
  }

  /**
   * The same, for one of ways partitions that may take now: a share of the free slots (rounded up), so a take that
   * hangs in one partition holds back only its share, not every slot.
   */
  int ask(int ways) {
    int free = Math.max(0, Math.min(free(), workers - writing - asking));
    int n = ways <= 1 ? free : (free + ways - 1) / ways;
    asking += n;
    return n;
  }

  /** The one dequeue out answered with n runs to hold a slot each (0 when it failed or they are not run here). */
  void taken(int n) {
    taken(asking, n);
  }

  /** A dequeue that asked for asked answered with n runs to hold a slot each. */
  void taken(int asked, int n) {
    asking -= asked;
    runs += n;
  }

  /** Up to n slots for a start call's hand-off; 0 when none is free. */
  int reserve(int n) {
    int granted = Math.min(Math.min(n, free()), workers - writing);
    if (granted <= 0) {
      return 0;
    }
    reserved += granted;
    return granted;
  }

  /** A start call answered (or failed): its n reserved slots go free, and ran of them hold a run now. */
  void unreserve(int n, int ran) {
    reserved -= n;
    runs += ran;
  }

  int reserved() {
    return reserved;
  }

  /** These are running here from now on (before any of them starts: see DequeueVerticle.run). */
  void running(List<Dequeued> txs) {
    for (Dequeued tx : txs) {
      running.merge(new Running(tx.txId(), tx.attempt()), 1, Integer::sum);
    }
  }

  /** A run handed its completion to Redis: its slot is free, its write is out. */
  void ended() {
    runs--;
    writing++;
  }

  /** A run is over: its write landed (ended was called) or it ended without one (its slot goes free now). */
  void released(Dequeued tx, boolean ended) {
    running.computeIfPresent(new Running(tx.txId(), tx.attempt()), (id, n) -> n > 1 ? n - 1 : null);
    if (ended) {
      writing--;
    } else {
      runs--;
    }
  }

  /** The runs under way here now, as a copy (what a put-back of lost work must leave alone). */
  Set<Running> running() {
    return Set.copyOf(running.keySet());
  }

  /** Slots in use: running, or writing their completion (the heartbeat and the metrics show it). */
  int busy() {
    return runs + writing;
  }

  int runs() {
    return runs;
  }

  /** Nothing runs, writes or is reserved: a drain may end. */
  boolean idle() {
    return runs == 0 && writing == 0 && reserved == 0;
  }
}
