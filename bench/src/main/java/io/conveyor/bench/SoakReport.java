package io.conveyor.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Arrays;

/**
 * A soak's line for each interval of a run (bench/soak): the transactions completed in it and their rate, the p50
 * and p99 of their start-to-completion latency, the heap after the latest collection, Redis's used_memory and the
 * completed transactions waiting for the archive. Kept as rows for the result; each also goes to stderr.
 */
final class SoakReport {
  private final BenchClient client;
  private final HeapWatch heap;
  private final long everyMs;
  private final JsonArray rows = new JsonArray();
  private int seen;

  SoakReport(BenchClient client, HeapWatch heap, long everyMs) {
    this.client = client;
    this.heap = heap;
    this.everyMs = everyMs;
  }

  /** Reports every interval on the client's context until the run is over (then once more, for the tail). */
  void watch(Vertx vertx, Tracker tracker, Future<Boolean> over) {
    long began = System.nanoTime();
    vertx.setPeriodic(everyMs, id -> {
      row(tracker, (System.nanoTime() - began) / 1e9);
      if (over.isComplete()) {
        vertx.cancelTimer(id);
      }
    });
  }

  private void row(Tracker tracker, double atSeconds) {
    long[] window = tracker.latenciesFrom(seen);
    seen += window.length;
    Arrays.sort(window);
    JsonObject row = new JsonObject().put("atS", Math.round(atSeconds)).put("completed", window.length)
        .put("tps", Math.round(window.length * 1000.0 / everyMs))
        .put("p50Ms", ms(rank(window, 0.50))).put("p99Ms", ms(rank(window, 0.99)))
        .put("heapAfterGcMB", Math.round(heap.lastAfterGc() / 1e5) / 10.0);
    // the Redis figures are read on this context; the row goes out when they are in
    Future.all(client.usedMemory(), client.toArchive()).onComplete(ar -> {
      if (ar.succeeded()) {
        row.put("redisUsedMB", Math.round(ar.result().<Long>resultAt(0) / 1e5) / 10.0)
            .put("toArchive", ar.result().<Long>resultAt(1));
      }
      rows.add(row);
      System.err.println("bench: soak: " + row.encode());
    });
  }

  private static long rank(long[] sorted, double q) {
    return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)];
  }

  private static double ms(long nanos) {
    return Math.round(nanos / 1e4) / 100.0;
  }

  JsonArray rows() {
    return rows;
  }
}
