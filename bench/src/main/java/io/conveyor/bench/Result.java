package io.conveyor.bench;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Arrays;

/**
 * What a run came to. finished counts transactions that completed or were refused (or, with --queue-only,
 * starts that replied); failed counts unsuccessful completions, refusals, and whatever never finished.
 */
record Result(int transactions, int finished, long spanNanos, long[] latencyNanos, int failed) {

  /** Keeps its own sorted copy of the latencies, so percentiles are simple look-ups. */
  Result {
    latencyNanos = latencyNanos.clone();
    Arrays.sort(latencyNanos);
  }

  double seconds() {
    return spanNanos / 1e9;
  }

  /** Transactions finished per second; the same as transactions/seconds when all of them finished. */
  double tps() {
    return spanNanos == 0 ? 0 : finished / seconds();
  }

  /** Nearest-rank percentile of start→completion latency, in milliseconds; 0 without any completion. */
  double percentileMs(double p) {
    if (latencyNanos.length == 0) {
      return 0;
    }
    int rank = (int) Math.ceil(p / 100.0 * latencyNanos.length);
    return latencyNanos[Math.max(0, rank - 1)] / 1e6;
  }

  /** The one line a run prints to stdout. */
  String line() {
    return "{\"transactions\":" + transactions + ",\"seconds\":" + num(seconds()) + ",\"tps\":" + num(tps())
        + ",\"p50Ms\":" + num(percentileMs(50)) + ",\"p95Ms\":" + num(percentileMs(95))
        + ",\"p99Ms\":" + num(percentileMs(99)) + ",\"failed\":" + failed + "}";
  }

  /** The one line a --queue-only run prints: how fast the starts went and what holding them costs. */
  String queueLine(double heapMb, double redisBytesPerTx) {
    return "{\"queued\":" + (transactions - failed) + ",\"seconds\":" + num(seconds())
        + ",\"startsPerSecond\":" + num(tps()) + ",\"heapUsedMB\":" + num(heapMb)
        + ",\"redisBytesPerTx\":" + num(redisBytesPerTx) + ",\"failed\":" + failed + "}";
  }

  /** Up to 3 decimals, no exponent, no trailing zeros. */
  static String num(double d) {
    if (!Double.isFinite(d)) {
      return "0";
    }
    BigDecimal b = BigDecimal.valueOf(d).setScale(3, RoundingMode.HALF_UP).stripTrailingZeros();
    return b.signum() == 0 ? "0" : b.toPlainString();
  }
}
