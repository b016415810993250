package io.conveyor.testing;

import java.time.Duration;
import java.util.function.Supplier;

/** Waits for a condition with a bound, instead of sleeping for luck. */
public final class Eventually {
  private Eventually() {
  }

  public static <T> T until(Duration bound, String what, Supplier<T> probe, java.util.function.Predicate<T> done) {
    return until(bound, Duration.ofMillis(5), what, probe, done);
  }

  /** As above, probing once per period: for probes that cost a process or a round trip each. */
  public static <T> T until(Duration bound, Duration every, String what, Supplier<T> probe,
      java.util.function.Predicate<T> done) {
    long deadline = System.nanoTime() + bound.toNanos();
    T last = probe.get();
    while (!done.test(last)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("waited " + bound.toMillis() + "ms for " + what + "; last seen: " + last);
      }
      java.util.concurrent.locks.LockSupport.parkNanos(every.toNanos());
      last = probe.get();
    }
    return last;
  }
}
