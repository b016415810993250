package io.conveyor.redis;

import io.conveyor.config.Config;
import io.conveyor.time.Ticker;
import io.vertx.core.AsyncResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * What this node has seen of each partition's Redis master, one per node, read and fed by many verticles (so
 * lock-free: each partition's state is an immutable record swapped in an AtomicReferenceArray). A partition is ok,
 * suspect (a call to it has been out longer than redis.partitionSuspectAfter) or failing (a call to it failed
 * because Redis did not answer). Any answer makes it ok again. It is a hint for placing new work and for refusing
 * early, never a verdict on a transaction: scripts still decide everything in Redis.
 */
public final class PartitionHealth {
  /** A partition's state; wire() is how the API and the logs name it. */
  public enum State {
    OK, SUSPECT, FAILING;

    public String wire() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** One partition's state, why (empty when ok), and since when (ticker nanos). */
  public record Status(State state, String reason, long since) {
  }

  private final AtomicReferenceArray<Status> states;
  /** Per partition, how many times its state changed (conveyor_partition_state_changes_total). */
  private final AtomicLongArray changes;
  private final Ticker ticker;
  private final Config.PartitionHealth settings;
  private final long suspectAfterNanos;
  /** False for a tracker no probe feeds: outcomes are not kept (see ignoring). */
  private final boolean keeps;

  /** Every partition ok at first; settings are redis.partitionSuspectAfter, partitionProbeTimeout, partitionWait. */
  public PartitionHealth(int partitions, Config.PartitionHealth settings, Ticker ticker) {
    this(partitions, settings, ticker, true);
  }

  private PartitionHealth(int partitions, Config.PartitionHealth settings, Ticker ticker, boolean keeps) {
    this.keeps = keeps;
    this.states = new AtomicReferenceArray<>(partitions);
    this.changes = new AtomicLongArray(partitions);
    this.ticker = ticker;
    this.settings = settings;
    this.suspectAfterNanos = settings.suspectAfter().toNanos();
    Status ok = new Status(State.OK, "", ticker.nanos());
    for (int p = 0; p < partitions; p++) {
      states.set(p, ok);
    }
  }

  /** A tracker nobody but its holder feeds (a shell client, a test's own context): every partition ok. */
  public static PartitionHealth untracked(int partitions) {
    return new PartitionHealth(partitions, Config.PartitionHealth.DEFAULTS, Ticker.SYSTEM);
  }

  /**
   * A tracker for a context outside a node (a shell client, a test's own context), which no probe feeds: it keeps
   * no outcome, so every partition stays ok and every call goes to Redis, which answers for itself. A failure kept
   * there would never be cleared: a start bound to that partition would wait and be refused for good, without
   * ever trying (SubscriptionFailoverTest's own starts did, after a failover).
   */
  public static PartitionHealth ignoring(int partitions) {
    return new PartitionHealth(partitions, Config.PartitionHealth.DEFAULTS, Ticker.SYSTEM, false);
  }

  public int partitions() {
    return states.length();
  }

  public Status status(int p) {
    return states.get(p);
  }

  public State state(int p) {
    return states.get(p).state();
  }

  /** How long a call may be out before its partition is suspect, a probe may take, a bound start may wait. */
  public Config.PartitionHealth settings() {
    return settings;
  }

  /** An answer came from partition p (a script's own error is an answer too). */
  public void succeeded(int p) {
    Status now = states.get(p);
    if (now.state() != State.OK && states.compareAndSet(p, now, new Status(State.OK, "", ticker.nanos()))) {
      changes.incrementAndGet(p);
    }
  }

  /** A call to partition p failed: only an outage (see isOutage) marks it failing, with its reason. */
  public void failed(int p, Throwable cause) {
    if (!keeps) {
      return;
    }
    if (isOutage(cause)) {
      Status was = states.getAndSet(p, new Status(State.FAILING, String.valueOf(cause.getMessage()), ticker.nanos()));
      if (was.state() != State.FAILING) {
        changes.incrementAndGet(p);
      }
    } else {
      succeeded(p);
    }
  }

  /** Feeds the outcome of one call to partition p. */
  public void observe(int p, AsyncResult<?> ar) {
    if (ar.succeeded()) {
      succeeded(p);
    } else {
      failed(p, ar.cause());
    }
  }

  /**
   * A call to partition p has been out since sentAt (ticker nanos): past redis.partitionSuspectAfter an ok
   * partition becomes suspect (a failing one stays failing).
   */
  public void outSince(int p, long sentAt) {
    long out = ticker.nanos() - sentAt;
    Status now = states.get(p);
    if (keeps && out >= suspectAfterNanos && now.state() == State.OK && states.compareAndSet(p, now,
        new Status(State.SUSPECT, "a call has been out for " + out / 1_000_000 + " ms", ticker.nanos()))) {
      changes.incrementAndGet(p);
    }
  }

  /**
   * Redis did not answer: no connection, no reply in time, or a master that cannot serve now. Not an outage: a
   * script's own error, a full Redis (Full: it answered), too few replicas in time (NotReplicated: the master ran it).
   */
  public static boolean isOutage(Throwable e) {
    return e instanceof RedisUnavailable && !(e instanceof RedisUnavailable.Full)
        && !(e instanceof RedisUnavailable.NotReplicated);
  }

  /** How many times partition p's state changed since the node started (ok → failing → ok is two). */
  public long changes(int p) {
    return changes.get(p);
  }

  /** When partition p's state began, as wall time: now less the ticker time since then. */
  public java.time.Instant since(int p, java.time.Clock clock) {
    long ago = ticker.nanos() - states.get(p).since();
    return java.time.Instant.ofEpochMilli(clock.millis() - ago / 1_000_000);
  }

  /** The partitions now ok, in order. */
  public List<Integer> ok() {
    List<Integer> out = new ArrayList<>(states.length());
    for (int p = 0; p < states.length(); p++) {
      if (states.get(p).state() == State.OK) {
        out.add(p);
      }
    }
    return out;
  }

  /** Where a start that may go anywhere goes: any ok partition at random, or any at all when none is ok. */
  public int pickForStart() {
    List<Integer> ok = ok();
    ThreadLocalRandom random = ThreadLocalRandom.current();
    return ok.isEmpty() ? random.nextInt(states.length()) : ok.get(random.nextInt(ok.size()));
  }

  /** An ok partition other than p at random, or -1 when there is none (a start placed again, once). */
  public int pickOtherThan(int p) {
    List<Integer> ok = new ArrayList<>(ok());
    ok.remove(Integer.valueOf(p));
    return ok.isEmpty() ? -1 : ok.get(ThreadLocalRandom.current().nextInt(ok.size()));
  }
}
