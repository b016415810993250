package io.conveyor.time;

/** The JVM's monotonic clock: the one place in the product that reads System.nanoTime (ArchitectureTest). */
final class SystemTicker implements Ticker {
  @Override
  public long nanos() {
    return System.nanoTime();
  }
}
