package io.conveyor.bench.chaos;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Every step execution the driver served, by transaction: which step, which attempt, on which node, when, and
 * under which idempotency key (the header idempotencyKey; null when none came).
 */
final class Executions {
  record Exec(int step, long attempt, String node, long atNanos, String key) {
  }

  private final Map<String, List<Exec>> byTx = new ConcurrentHashMap<>();

  void record(String txId, int step, long attempt, String node, String key) {
    byTx.computeIfAbsent(txId, k -> new CopyOnWriteArrayList<>()).add(new Exec(step, attempt, node, System.nanoTime(),
        key));
  }

  /**
   * Effects duplicated, as a receiver that de-duplicates by idempotency key sees them: the effects of each
   * txId#step (one per distinct key; an execution without a key is an effect of its own) beyond the first.
   */
  long effectsDuplicated() {
    return byTx.values().stream().mapToLong(l -> l.stream().map(Exec::step).distinct().mapToLong(step -> {
      List<Exec> runs = l.stream().filter(e -> e.step() == step).toList();
      long keyless = runs.stream().filter(e -> e.key() == null).count();
      return runs.stream().map(Exec::key).filter(java.util.Objects::nonNull).distinct().count() + keyless - 1;
    }).sum()).sum();
  }

  /** Executions a receiver that de-duplicates by idempotency key recognised as done already (no effect). */
  long deduplicated() {
    return byTx.values().stream().mapToLong(l -> l.stream().filter(e -> e.key() != null).count()
        - l.stream().map(Exec::key).filter(java.util.Objects::nonNull).distinct().count()).sum();
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

  /**
   * Why each duplicate ran, as counts: the faulted node's work taken over (an earlier execution of the step on
   * the faulted node, this one at a higher attempt), a healthy node's step tried again at a higher attempt
   * (an eventbus request retried after a view change, or a healthy node taken over), or the same attempt
   * sending the step twice.
   */
  java.util.Map<String, Long> duplicateCauses(String faulted) {
    java.util.Map<String, Long> causes = new java.util.TreeMap<>();
    forEachDuplicate((first, again) -> causes.merge(cause(first, again, faulted), 1L, Long::sum));
    return causes;
  }

  /** One line per duplicate execution: txId, step, then each execution as attempt@node+ms since the mark. */
  List<String> duplicateLines(String faulted, long markNanos) {
    List<String> lines = new java.util.ArrayList<>();
    byTx.forEach((tx, l) -> l.stream().map(Exec::step).distinct().forEach(step -> {
      List<Exec> runs = l.stream().filter(e -> e.step() == step).toList();
      if (runs.size() > 1) {
        lines.add(tx + " step " + step + ": " + cause(runs.get(0), runs.get(1), faulted) + ": " + runs.stream()
            .map(e -> e.attempt() + "@" + e.node() + "+" + (e.atNanos() - markNanos) / 1_000_000 + "ms")
            .collect(java.util.stream.Collectors.joining(", ")));
      }
    }));
    return lines;
  }

  private void forEachDuplicate(java.util.function.BiConsumer<Exec, Exec> each) {
    byTx.values().forEach(l -> l.stream().map(Exec::step).distinct().forEach(step -> {
      List<Exec> runs = l.stream().filter(e -> e.step() == step).toList();
      for (int i = 1; i < runs.size(); i++) {
        each.accept(runs.get(i - 1), runs.get(i));
      }
    }));
  }

  /**
   * Of two executions of one step, the lower attempt says whose work it was (the same attempt twice: whose
   * request went out twice); "arrived late" when the lower attempt's request reached the driver after the
   * higher one's (sent before the fault, delivered after it).
   */
  private static String cause(Exec before, Exec again, String faulted) {
    Exec first = again.attempt() < before.attempt() ? again : before;
    String whose = first.node().equals(faulted) ? "faulted node's" : "healthy node's";
    if (again.attempt() == before.attempt()) {
      return "same attempt sent again (" + whose + ")";
    }
    return (first.node().equals(faulted) ? "faulted node's work taken over" : "healthy node's step tried again")
        + (first == again ? ", its request arriving after the takeover's" : "");
  }

  /** Executions at attempt > 1 that began after the given moment (work taken over after a fault). */
  long retriedSince(long nanos) {
    return byTx.values().stream().flatMap(List::stream).filter(e -> e.attempt() > 1 && e.atNanos() >= nanos).count();
  }
}
