package io.conveyor.time;

/**
 * Elapsed time, everywhere in the product: leases, registration, the leader roles' waits, script and step
 * timings, deadlines. A monotonic count of nanoseconds, meaningful only as a difference (like System.nanoTime,
 * which {@link #SYSTEM} reads, the only class that does). Injected by the composition roots (Node, ClientRoot),
 * so a test moves it by hand (testing/MutableTicker) where the wall clock would have to pass. It depends on
 * nothing, so every package may use it.
 */
@FunctionalInterface
public interface Ticker {
  /** The one production ticker. */
  Ticker SYSTEM = new SystemTicker();

  /** Now, in nanoseconds since an arbitrary origin. */
  long nanos();
}
