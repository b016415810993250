package io.conveyor.queue;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;

/**
 * Which partition the next take looks into. With one partition, always that one. With several: the
 * partitions where work is known to wait (a ring was heard, or a take left some), oldest first, each to the
 * back once looked into; when none is known, an idle node looks into one in turn every few idle waits, in
 * case a ring was lost. Kept by the dequeue verticle on its own context.
 */
final class PartitionRotation {
  /** No partition is known to hold work: wait for a ring. */
  static final int NONE = -1;
  private final int parts;
  private final LinkedHashSet<Integer> hot = new LinkedHashSet<>();
  /**
   * Rings heard per partition. A ring travels on the subscription, the dequeue's reply on another
   * connection, so a ring for work queued after a dequeue ran there can arrive before that dequeue's reply;
   * the reply then says "empty", but must not make the partition cold (see emptied).
   */
  private final Map<Integer, Long> rings = new HashMap<>();
  /** The next partition an idle node looks into when no ring came. */
  private int sweepNext;
  private boolean sweep;

  /** parts partitions; an idle node's first look goes to partition first. */
  PartitionRotation(int parts, int first) {
    this.parts = parts;
    this.sweepNext = first;
  }

  /** Work may have come while nobody listened (a new or renewed subscription): every partition counts as hot. */
  void allHot() {
    for (int p = 0; p < parts; p++) {
      hot.add(p);
    }
  }

  /** A ring was heard in partition p: work waits there. */
  void rang(int p) {
    hot.add(p);
    rings.merge(p, 1L, Long::sum);
  }

  /** Rings heard in p so far (compare before and after a take: see emptied). */
  long ringsHeard(int p) {
    return rings.getOrDefault(p, 0L);
  }

  /** The idle wait ended without a ring: the next take looks into one partition in turn. */
  void sweepDue() {
    sweep = true;
  }

  /** The partition to take from now, or NONE. */
  int next() {
    return next(p -> false);
  }

  /** The partition to take from now, passing over those busy says are (a take is out there), or NONE. */
  int next(java.util.function.IntPredicate busy) {
    if (parts == 1) {
      return busy.test(0) ? NONE : 0;
    }
    for (int p : hot) {
      if (!busy.test(p)) { // the oldest hot partition, then to the back: each gets its turn
        hot.remove(p);
        hot.add(p);
        return p;
      }
    }
    if (sweep && !busy.test(sweepNext)) {
      sweep = false;
      int p = sweepNext;
      sweepNext = (sweepNext + 1) % parts;
      return p;
    }
    return NONE;
  }

  /** A take in p found its queues empty: p is cold unless a ring came since the take went out (ringsBefore). */
  void emptied(int p, long ringsBefore) {
    if (ringsHeard(p) == ringsBefore) {
      hot.remove(p); // a start there rings
    }
  }
}
