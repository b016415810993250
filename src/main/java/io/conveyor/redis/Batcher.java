package io.conveyor.redis;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Sends calls in batches: when no call is out, an item goes at once (a batch of one, so a quiet node adds
 * no delay); while one is out, items gather and leave together when it returns. Under load one round trip
 * and one script call serve hundreds of items. Meant for one context (its owner's verticle), it is still
 * safe when a client adds from other threads: its bookkeeping is under a lock, its calls are made outside it.
 * When Redis is slow and the backlog reaches its bound, new items are refused at once (RedisUnavailable.NotSent).
 * One batcher serves one partition where a partition's trouble must not hold the others (PartitionBatchers): its
 * one call out at a time and its backlog bound are then per partition.
 * With a linger (redis.linger), an item that finds no call out waits up to that long on its context's timer for
 * others to join it (the batch goes at once when it is full): fewer, larger calls at a steady rate, each item later
 * by up to the linger (docs/decisions.md, "A linger for steady load"). Off a Vert.x context it goes at once.
 *
 * @param <I> what a caller hands in
 * @param <O> the answer for one item; the call answers one per item, in order
 */
public final class Batcher<I, O> {
  /**
   * The most items of one call for a batch of transactions (starts, completions). A script holds Redis alone while it
   * runs: a start call of 500 took 7.7 ms, in which no dequeue or completion of any node could run, and with 100 a
   * call the same node went 6 % faster (docs/performance.md).
   */
  public static final int MAX = 100;
  /** The most items waiting for a call: beyond it Redis is too slow to keep up, and new items are refused. */
  public static final int BACKLOG = 50_000;
  private final int max;
  private final int backlog;
  private final long lingerMs;
  private final Function<List<I>, List<Future<O>>> call;
  private List<I> items = new ArrayList<>();
  private List<Promise<O>> answers = new ArrayList<>();
  private boolean sending;
  /** A linger's timer holds the waiting items (sending is set meanwhile, so nothing else goes). */
  private boolean lingering;
  /** Which linger is on: a timer already due when a full batch cancelled it must not end a later one early. */
  private long lingers;
  private long lingerTimer;
  private Vertx lingerOwner;

  /** At most max items a call; at most BACKLOG items waiting (100 calls' worth when max is larger). */
  public Batcher(int max, Function<List<I>, Future<List<O>>> call) {
    this(max, items -> Partitioned.spread(call.apply(items), items.size()), Math.max(BACKLOG, 100 * max), 0);
  }

  private Batcher(int max, Function<List<I>, List<Future<O>>> call, int backlog, long lingerMs) {
    this.max = max;
    this.backlog = backlog;
    this.call = call;
    this.lingerMs = lingerMs;
  }

  /**
   * A batcher whose call answers each item on its own (one Future per item, in order: a batch split by partition,
   * see Partitioned); the next call goes once every item of the last one is answered.
   */
  public static <I, O> Batcher<I, O> perItem(int max, Function<List<I>, List<Future<O>>> call) {
    return perItem(max, call, 0);
  }

  /** The same, an item that finds no call out waiting up to lingerMs for others (0: none; see the class). */
  public static <I, O> Batcher<I, O> perItem(int max, Function<List<I>, List<Future<O>>> call, long lingerMs) {
    return new Batcher<>(max, call, Math.max(BACKLOG, 100 * max), lingerMs);
  }

  public Future<O> add(I item) {
    Promise<O> answer = Promise.promise();
    Batch<I, O> batch = null;
    long cancel = -1;
    Vertx owner = null;
    synchronized (this) {
      if (items.size() >= backlog) {
        return Future.failedFuture(new RedisUnavailable.NotSent(new IllegalStateException(items.size()
            + " calls are waiting for Redis already")));
      }
      items.add(item);
      answers.add(answer);
      Context context = lingerMs > 0 && !sending && items.size() < max ? Vertx.currentContext() : null;
      long turn = lingers + 1;
      long timer = context == null ? -1 : lingerTimer(context, turn);
      if (timer >= 0) {
        sending = true;
        lingering = true;
        lingers = turn;
        lingerOwner = context.owner();
        lingerTimer = timer;
      } else if (lingering && items.size() >= max) {
        // full before its linger is up: it goes now
        lingering = false;
        cancel = lingerTimer;
        owner = lingerOwner;
        batch = take();
      } else if (!sending) {
        batch = take();
      }
    }
    if (owner != null) {
      owner.cancelTimer(cancel);
    }
    if (batch != null) {
      send(batch);
    }
    return answer.future();
  }

  /** A timer on context that ends linger number turn; -1 when none can be set (a closing Vert.x): send at once. */
  private long lingerTimer(Context context, long turn) {
    try {
      return context.owner().setTimer(lingerMs, t -> lingered(turn));
    } catch (RuntimeException closing) {
      return -1;
    }
  }

  /** Linger number turn is up: what waits goes (unless a full batch went before it, ending that linger). */
  private void lingered(long turn) {
    Batch<I, O> batch;
    synchronized (this) {
      if (!lingering || lingers != turn) {
        return;
      }
      lingering = false;
      batch = items.isEmpty() ? null : take();
      sending = batch != null;
    }
    if (batch != null) {
      send(batch);
    }
  }

  private record Batch<I, O>(List<I> items, List<Promise<O>> answers) {
  }

  /** Takes the next batch off the waiting items and marks a call out; under the lock. */
  private Batch<I, O> take() {
    int n = Math.min(max, items.size());
    Batch<I, O> batch = new Batch<>(new ArrayList<>(items.subList(0, n)), new ArrayList<>(answers.subList(0, n)));
    items = new ArrayList<>(items.subList(n, items.size()));
    answers = new ArrayList<>(answers.subList(n, answers.size()));
    sending = true;
    return batch;
  }

  private void send(Batch<I, O> batch) {
    List<Future<O>> sent;
    try {
      sent = call.apply(batch.items());
    } catch (RuntimeException e) {
      sent = java.util.Collections.nCopies(batch.items().size(), Future.failedFuture(e));
    }
    List<Promise<O>> promised = batch.answers();
    for (int i = 0; i < promised.size(); i++) {
      Promise<O> answer = promised.get(i);
      if (i < sent.size()) {
        sent.get(i).onComplete(answer);
      } else {
        answer.fail(new IllegalStateException("the batch answered " + sent.size() + " of " + promised.size()));
      }
    }
    Future.join(sent).onComplete(ar -> done());
  }

  /** Every item of the call out is answered: the next batch goes. */
  private void done() {
    Batch<I, O> next;
    synchronized (this) {
      sending = false;
      next = items.isEmpty() ? null : take();
    }
    if (next != null) {
      send(next);
    }
  }
}
