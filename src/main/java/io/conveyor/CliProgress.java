package io.conveyor;

import io.conveyor.time.Ticker;
import java.io.PrintStream;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * How far a long walk got, as a line on stderr (stdout stays what a script parses): at most one line per
 * interval, the first only once an interval has passed, so a short walk prints none. An interval of zero prints
 * at every step (tests).
 */
final class CliProgress {
  private final PrintStream err;
  private final Ticker ticker;
  private final long everyNanos;
  private long last;

  CliProgress(PrintStream err, Ticker ticker, Duration every) {
    this.err = err;
    this.ticker = ticker;
    this.everyNanos = every.toNanos();
    this.last = ticker.nanos();
  }

  /** Prints the line (built only when due) if an interval has passed since the last one, or since the start. */
  void note(Supplier<String> line) {
    long now = ticker.nanos();
    if (now - last >= everyNanos) {
      err.println("… " + line.get());
      err.flush();
      last = now;
    }
  }

  /** "1 page", "2 pages". */
  static String count(long n, String noun) {
    return n + " " + noun + (n == 1 ? "" : "s");
  }
}
