package io.conveyor.bench.chaos;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** Every step execution the driver served, by transaction: which step, which attempt, on which node, when. */
final class Executions {
  record Exec(int step, long attempt, String node, long atNanos) {
  }

  private final Map<String, List<Exec>> byTx = new ConcurrentHashMap<>();

  void record(String txId, int step, long attempt, String node) {
    byTx.computeIfAbsent(txId, k -> new CopyOnWriteArrayList<>()).add(new Exec(step, attempt, node, System.nanoTime()));
  }

  int total() {
    return byTx.values().stream().mapToInt(List::size).sum();
  }

  /** Executions beyond the first of each txId#step. */
  long duplicates() {
    return byTx.values().stream().mapToLong(l -> l.size() - l.stream().mapToInt(Exec::step).distinct().count()).sum();
  }

  /** Transactions that ran a step more than once. */
  long duplicatedTransactions() {
    return byTx.values().stream().filter(l -> l.size() > l.stream().mapToInt(Exec::step).distinct().count()).count();
  }

  /**
   * Transactions requeued away from a node that was not the faulted one: an execution at attempt a on a
   * healthy node, and a later one at a higher attempt. Only the faulted node's work may legitimately move.
   */
  long healthyRequeued(String faulted) {
    return byTx.values().stream().filter(l -> l.stream().anyMatch(e -> !e.node().equals(faulted)
        && l.stream().anyMatch(f -> f.attempt() > e.attempt()))).count();
  }

  /** Executions at attempt > 1 that began after the given moment (work taken over after a fault). */
  long retriedSince(long nanos) {
    return byTx.values().stream().flatMap(List::stream).filter(e -> e.attempt() > 1 && e.atNanos() >= nanos).count();
  }
}
