package io.conveyor.redis;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One Redis Cluster master's (or seed's) link in a SlotRouter, with what the router judges it by: when it last
 * answered and last failed, and its commands out (ticker nanos). A master with commands out that has answered
 * none for SILENT counts as failing: a paused (SIGSTOP) or hung master answers nothing and closes nothing, so its
 * commands would only fail at redis.timeout. SILENT is above redis.waitTimeout's default (1 s): a WAIT may hold a
 * batch that long on a master whose replica lags, and that master is not silent. The count is atomic only because
 * tests send from their own threads; a node's router is used on one context.
 */
final class RoutedMaster {
  static final long SILENT_NANOS = 2_000_000_000L;
  final RedisLink link;
  long okAt;
  long failedAt;
  /** Commands and batches sent and not answered yet. */
  private final AtomicInteger out = new AtomicInteger();
  /** When out last went from 0 to 1: silence is counted from it or the last answer, the later. */
  private volatile long busySince;

  /** failedLongAgo: a failedAt that no watch counts as recent. */
  RoutedMaster(RedisLink link, long now, long failedLongAgo) {
    this.link = link;
    this.okAt = now;
    this.failedAt = failedLongAgo;
  }

  boolean failing() {
    return failedAt > okAt;
  }

  /** A command or batch goes out now. */
  void sent(long now) {
    if (out.getAndIncrement() == 0) {
      busySince = now;
    }
  }

  /** Its answer (or failure) came. */
  void answered() {
    out.decrementAndGet();
  }

  int out() {
    return out.get();
  }

  /** Whether it has commands out and has answered none of them for SILENT: then it is failing from now. */
  boolean silent(long now) {
    return out.get() > 0 && !failing() && now - Math.max(okAt, busySince) > SILENT_NANOS;
  }

  /** How long since it last answered or was given work after having none, in ms (for the log). */
  long quietMs(long now) {
    return (now - Math.max(okAt, busySince)) / 1_000_000;
  }
}
