package io.conveyor.lease;

/**
 * Elapsed time for leases, registration and the leader roles' own waits: a monotonic count of nanoseconds,
 * meaningful only as a difference (like System.nanoTime, which {@link #SYSTEM} reads). Injected, so a test
 * moves it by hand (testing/MutableTicker) where the wall clock would have to pass.
 */
@FunctionalInterface
public interface Ticker {
  /** The one production ticker. */
  Ticker SYSTEM = new SystemTicker();

  /** Now, in nanoseconds since an arbitrary origin. */
  long nanos();
}
