package io.conveyor.testing;

import io.conveyor.time.Ticker;
import java.time.Duration;

/** A ticker the test moves by hand (as MutableClock is a clock). */
public final class MutableTicker implements Ticker {
  private volatile long nanos;

  public MutableTicker(long nanos) {
    this.nanos = nanos;
  }

  public void advance(Duration d) {
    nanos += d.toNanos();
  }

  @Override
  public long nanos() {
    return nanos;
  }
}
