package io.conveyor.redis;

import io.conveyor.time.Ticker;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;

/**
 * One Batcher per partition (made at its first item), an item routed by its txId's partition: a call that waits on
 * one partition's master (a failover, a long script) holds back only that partition's items, never another's.
 * Batcher.MAX and Batcher.BACKLOG hold per partition (so the node's whole backlog is up to P times BACKLOG).
 * Each call's outcome feeds the node's PartitionHealth; a call out longer than its suspectAfter makes its partition
 * suspect, looked at on each add and by a timer at that deadline on the context that sent it (none off a context).
 *
 * @param <I> what a caller hands in
 * @param <O> the answer for one item
 */
public final class PartitionBatchers<I, O> {
  private static final long NONE = Long.MIN_VALUE;
  private final Keys keys;
  private final Function<I, String> txIdOf;
  private final int max;
  private final Function<List<I>, List<Future<O>>> call;
  private final PartitionHealth health;
  private final Ticker ticker;
  private final long lingerMs;
  private final AtomicReferenceArray<Batcher<I, O>> batchers;
  /** When each partition's call went out (ticker nanos), NONE while none is out. */
  private final AtomicLongArray outSince;

  /** call gets items of one partition at a time, at most max, and answers each (see Batcher.perItem). */
  public PartitionBatchers(Keys keys, Function<I, String> txIdOf, int max, Function<List<I>, List<Future<O>>> call,
                           PartitionHealth health, Ticker ticker) {
    this(keys, txIdOf, max, call, health, ticker, Duration.ZERO);
  }

  /** The same, each batcher lingering (redis.linger: see Batcher) for items to join one that finds no call out. */
  public PartitionBatchers(Keys keys, Function<I, String> txIdOf, int max, Function<List<I>, List<Future<O>>> call,
                           PartitionHealth health, Ticker ticker, Duration linger) {
    this.lingerMs = linger.toMillis();
    this.keys = keys;
    this.txIdOf = txIdOf;
    this.max = max;
    this.call = call;
    this.health = health;
    this.ticker = ticker;
    this.batchers = new AtomicReferenceArray<>(keys.partitions());
    this.outSince = new AtomicLongArray(keys.partitions());
    for (int p = 0; p < keys.partitions(); p++) {
      outSince.set(p, NONE);
    }
  }

  public Future<O> add(I item) {
    check();
    return batcher(keys.partitionOf(txIdOf.apply(item))).add(item);
  }

  /** Marks suspect each partition whose call has been out too long (see PartitionHealth.outSince). */
  public void check() {
    for (int p = 0; p < outSince.length(); p++) {
      long sent = outSince.get(p);
      if (sent != NONE) {
        health.outSince(p, sent);
      }
    }
  }

  private Batcher<I, O> batcher(int p) {
    Batcher<I, O> b = batchers.get(p);
    if (b == null) {
      batchers.compareAndSet(p, null, Batcher.perItem(max, items -> send(p, items), lingerMs));
      b = batchers.get(p);
    }
    return b;
  }

  /** One partition's call: timed for suspicion, its outcome told to the health tracker. */
  private List<Future<O>> send(int p, List<I> items) {
    long sent = ticker.nanos();
    outSince.set(p, sent);
    Context context = Vertx.currentContext();
    long timer = context == null ? -1 : context.owner().setTimer(Math.max(1, health.settings().suspectAfter().toMillis()),
        t -> health.outSince(p, sent));
    List<Future<O>> answers = answersOf(items);
    Future.join(answers).onComplete(ar -> {
      outSince.compareAndSet(p, sent, NONE);
      if (timer >= 0) {
        context.owner().cancelTimer(timer);
      }
      Throwable outage = answers.stream().filter(Future::failed).map(Future::cause)
          .filter(PartitionHealth::isOutage).findFirst().orElse(null);
      if (outage != null) {
        health.failed(p, outage);
      } else {
        health.succeeded(p);
      }
    });
    return answers;
  }

  private List<Future<O>> answersOf(List<I> items) {
    try {
      return call.apply(items);
    } catch (RuntimeException e) {
      return java.util.Collections.nCopies(items.size(), Future.failedFuture(e));
    }
  }
}
