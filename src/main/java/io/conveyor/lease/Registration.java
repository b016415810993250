package io.conveyor.lease;

import io.conveyor.time.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What this node knows of its own registration in Redis: when (by the ticker) the last heartbeat that
 * Redis accepted was sent. Redis set the key to live a TTL from some moment after that, so until then no
 * reaper can take the node over. The dequeue verticle takes work only while that is so (with an interval
 * to spare): after a pause or an outage it waits for the next beat, which either confirms the node or tells
 * it that it was taken over, instead of taking work in between that is then run twice. After a pause it also
 * waits until its cluster view is whole again (ClusterView), so its steps' requests can be answered.
 * <p>
 * Shared by the heartbeat (which writes it) and the dequeue verticle (which reads it on every take): one
 * thread-safe number outside any verticle (docs/decisions.md, "Leases have one home").
 */
public final class Registration {
  private final Ticker ticker;
  private final long windowNanos;
  private final AtomicLong confirmedAt;
  private final ClusterView view;

  /** window: how long after a confirmed beat was sent the node may still take work (TTL less an interval). */
  public Registration(Duration window, Ticker ticker) {
    this(window, ticker, new ClusterView(window, ticker));
  }

  /** The same, with the node's cluster view, which holds the node after a pause until it is whole. */
  public Registration(Duration window, Ticker ticker, ClusterView view) {
    this.ticker = ticker;
    this.windowNanos = window.toNanos();
    this.confirmedAt = new AtomicLong(ticker.nanos());
    this.view = view;
  }

  /** This node's cluster view against Redis's registry. */
  public ClusterView view() {
    return view;
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

  /**
   * Whether the node may take work now: its registration is recent, and it is not held after a pause with a
   * cluster view that is not whole yet (see ClusterView).
   */
  public boolean mayWork() {
    return recent() && !view.held();
  }
}
