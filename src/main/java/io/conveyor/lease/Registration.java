package io.conveyor.lease;

import io.conveyor.time.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What this node knows of its own registration in Redis: when (by the ticker) the last heartbeat that
 * Redis accepted was sent. Redis set the key to live a TTL from some moment after that, so until then no
 * reaper can take the node over. The dequeue verticle takes work only while that is so (with an interval
 * to spare): after a pause or an outage it waits for the next beat, which either confirms the node or tells
 * it that it was taken over, instead of taking work in between that is then run twice.
 * <p>
 * Shared by the heartbeat (which writes it) and the dequeue verticle (which reads it on every take): one
 * thread-safe number outside any verticle (docs/decisions.md, "Leases have one home").
 */
public final class Registration {
  private final Ticker ticker;
  private final long windowNanos;
  private final AtomicLong confirmedAt;

  /** window: how long after a confirmed beat was sent the node may still take work (TTL less an interval). */
  public Registration(Duration window, Ticker ticker) {
    this.ticker = ticker;
    this.windowNanos = window.toNanos();
    this.confirmedAt = new AtomicLong(ticker.nanos());
  }

  /** Now, by the ticker: the moment to pass to {@link #confirmed(long)}, taken just before sending a beat. */
  public long now() {
    return ticker.nanos();
  }

  /** A beat sent at sentAt (the ticker) was accepted. */
  public void confirmed(long sentAt) {
    confirmedAt.accumulateAndGet(sentAt, Math::max);
  }

  /** True while the last accepted beat is recent enough that Redis cannot have judged this node dead. */
  public boolean recent() {
    return ticker.nanos() - confirmedAt.get() < windowNanos;
  }
}
