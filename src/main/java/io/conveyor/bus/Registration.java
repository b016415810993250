package io.conveyor.bus;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What this node knows of its own registration in Redis: when (System.nanoTime) the last heartbeat that
 * Redis accepted was sent. Redis set the key to live a TTL from some moment after that, so until then no
 * reaper can take the node over. The dequeue verticle takes work only while that is so (with an interval
 * to spare): after a pause or an outage it waits for the next beat, which either confirms the node or tells
 * it that it was taken over, instead of taking work in between that is then run twice.
 */
public final class Registration {
  private final long windowNanos;
  private final AtomicLong confirmedAt = new AtomicLong(System.nanoTime());

  /** window: how long after a confirmed beat was sent the node may still take work (TTL less an interval). */
  public Registration(Duration window) {
    this.windowNanos = window.toNanos();
  }

  /** A beat sent at sentAt (System.nanoTime) was accepted. */
  public void confirmed(long sentAt) {
    confirmedAt.accumulateAndGet(sentAt, Math::max);
  }

  /** True while the last accepted beat is recent enough that Redis cannot have judged this node dead. */
  public boolean recent() {
    return System.nanoTime() - confirmedAt.get() < windowNanos;
  }
}
