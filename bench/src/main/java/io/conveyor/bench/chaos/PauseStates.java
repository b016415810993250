package io.conveyor.bench.chaos;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** bench/pause's reads of its private Redis: each transaction's position, and the pipeline's slots. */
final class PauseStates {
  /**
   * Where one transaction stands: what a move changes (step, stepAttempt, attempt, processingState), whether it is
   * paused, its status, whether a timer fell due while paused (pausedWake) and whether dequeue (or checkpoint)
   * parked it off its queue (pausedQueue).
   */
  record Pos(String step, String stepAttempt, String attempt, String state, boolean paused, String status,
             boolean fellDue, boolean offQueue) {
    boolean sameAs(Pos o) {
      return step.equals(o.step) && stepAttempt.equals(o.stepAttempt) && attempt.equals(o.attempt)
          && state.equals(o.state);
    }

    /** sleeping at step 0 with stepAttempt 2: waiting for its retry; at step 1: in its delay. */
    String phase() {
      return switch (state) {
        case "sleeping" -> step.equals("0") ? "retrying" : "sleeping";
        case "processing" -> "running";
        default -> state;
      };
    }
  }

  private final RedisServer redis;
  private final String prefix;

  PauseStates(RedisServer redis, String prefix) {
    this.redis = redis;
    this.prefix = prefix;
  }

  /** Every transaction's position (by txId), or null when Redis did not answer in time. */
  Map<String, Pos> read(List<String> ids) {
    Map<String, Pos> out = new HashMap<>();
    for (int i = 0; i < ids.size(); i += 250) {
      List<String> part = ids.subList(i, Math.min(ids.size(), i + 250));
      List<String> lines = redis.pipe(part.stream().map(id -> "HMGET " + prefix + "stateH:" + id
          + " step stepAttempt attempt processingState paused status pausedWake pausedQueue").toList());
      if (lines == null || lines.size() < 8 * part.size()) {
        return null;
      }
      for (int j = 0; j < part.size(); j++) {
        List<String> f = lines.subList(8 * j, 8 * j + 8);
        out.put(part.get(j), new Pos(f.get(0), f.get(1), f.get(2), f.get(3), !f.get(4).isEmpty(), f.get(5),
            !f.get(6).isEmpty(), !f.get(7).isEmpty()));
      }
    }
    return out;
  }

  /** Concurrency slots held now: the sum of every qRunH hash of the run (-1 when Redis did not answer). */
  long slots() {
    String keys = redis.cli("KEYS", prefix + "*qRunH*");
    if (keys == null) {
      return -1;
    }
    long sum = 0;
    for (String k : keys.lines().filter(l -> !l.isBlank()).toList()) {
      String vals = redis.cli("HVALS", k);
      if (vals == null) {
        return -1;
      }
      sum += vals.lines().filter(l -> !l.isBlank()).mapToLong(Long::parseLong).sum();
    }
    return sum;
  }

  /** How many of each phase, e.g. {sleeping=300, retrying=300, running=100, queued=300}. */
  static Map<String, Integer> phases(Map<String, Pos> all) {
    Map<String, Integer> c = new java.util.TreeMap<>();
    all.values().forEach(p -> c.merge(p.phase(), 1, Integer::sum));
    return c;
  }

  static List<String> where(Map<String, Pos> all, java.util.function.Predicate<Pos> p) {
    List<String> out = new ArrayList<>();
    all.forEach((id, pos) -> {
      if (p.test(pos)) {
        out.add(id);
      }
    });
    return out;
  }
}
