package io.conveyor.bench;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Pairs each start with its completion and keeps the latencies. A completion can arrive before its start
 * has replied (the txId is only known from the reply), so such completions wait in a map of their own.
 * Used from the bench's one context only, hence plain maps and counters.
 */
final class Tracker implements Completions.Listener {
  private record Early(String status, long arrivedNanos) {
  }

  private final int expected;
  private final boolean waitForCompletions;
  private final Map<String, Long> awaiting;
  private final Map<String, Early> early = new HashMap<>();
  private final long[] latencies;
  private final Promise<Void> done = Promise.promise();
  private int issued;
  private int replied;
  private int refused;
  private int completed;
  private int unsuccessful;
  private int peakBacklog;
  private long firstStart = Long.MAX_VALUE;
  private long lastEvent = Long.MIN_VALUE;

  /** waitForCompletions false means done once every start has replied (nothing runs them). */
  Tracker(int expected, boolean waitForCompletions) {
    this.expected = expected;
    this.waitForCompletions = waitForCompletions;
    this.latencies = new long[expected];
    // sized for the worst case (every start replied, none completed) so it never rehashes mid-run
    this.awaiting = new HashMap<>(Math.max(16, expected * 4 / 3 + 1));
  }

  void issued(long startNanos) {
    issued++;
    firstStart = Math.min(firstStart, startNanos);
  }

  void replied(String txId, long startNanos) {
    replied++;
    Early e = early.remove(txId);
    if (e != null) {
      record(startNanos, e.status, e.arrivedNanos);
    } else if (waitForCompletions) {
      awaiting.put(txId, startNanos);
      peakBacklog = Math.max(peakBacklog, awaiting.size());
    } else {
      lastEvent = Math.max(lastEvent, System.nanoTime());
    }
    checkDone();
  }

  void refused() {
    replied++;
    refused++;
    checkDone();
  }

  @Override
  public void completed(String txId, String status, long arrivedNanos) {
    Long start = awaiting.remove(txId);
    if (start == null) {
      early.put(txId, new Early(status, arrivedNanos));
      return;
    }
    record(start, status, arrivedNanos);
    checkDone();
  }

  private void record(long startNanos, String status, long arrivedNanos) {
    latencies[completed++] = arrivedNanos - startNanos;
    lastEvent = Math.max(lastEvent, arrivedNanos);
    if (!"success".equals(status)) {
      unsuccessful++;
    }
  }

  private void checkDone() {
    int finished = waitForCompletions ? completed + refused : replied;
    if (finished >= expected) {
      done.tryComplete();
    }
  }

  /** Completes when every transaction has finished (or, without completions, every start replied). */
  Future<Void> done() {
    return done.future();
  }

  int issued() {
    return issued;
  }

  int replied() {
    return replied;
  }

  int completed() {
    return completed;
  }

  /** The latencies (ns) of the completions from the from-th on, in the order they came. */
  long[] latenciesFrom(int from) {
    return Arrays.copyOfRange(latencies, Math.min(from, completed), completed);
  }

  /** The most transactions started (replied) and not yet completed at once: queued or running. */
  int peakBacklog() {
    return peakBacklog;
  }

  /** What the run came to; call it once the run is over (done, or given up on). */
  Result result() {
    int finished = waitForCompletions ? completed + refused : replied;
    long span = lastEvent == Long.MIN_VALUE ? 0 : lastEvent - firstStart;
    return new Result(expected, finished, span, Arrays.copyOf(latencies, completed),
        unsuccessful + refused + (expected - finished));
  }
}
