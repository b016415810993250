package io.conveyor.redis;

import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Sends calls in batches: when no call is out, an item goes at once (a batch of one, so a quiet node adds
 * no delay); while one is out, items gather and leave together when it returns. Under load one round trip
 * and one script call serve hundreds of items. Use it from one context (its owner's verticle): it takes
 * no locks. When Redis is slow and the backlog reaches its bound, new items are refused at once.
 *
 * @param <I> what a caller hands in
 * @param <O> the answer for one item; the call answers one per item, in order
 */
public final class Batcher<I, O> {
  private final int max;
  private final int backlog;
  private final Function<List<I>, Future<List<O>>> call;
  private List<I> items = new ArrayList<>();
  private List<Promise<O>> answers = new ArrayList<>();
  private boolean sending;

  /** At most max items a call; at most 100 calls' worth waiting. */
  public Batcher(int max, Function<List<I>, Future<List<O>>> call) {
    this.max = max;
    this.backlog = 100 * max;
    this.call = call;
  }

  public Future<O> add(I item) {
    if (items.size() >= backlog) {
      return Future.failedFuture(new IllegalStateException(items.size() + " calls are waiting for Redis already"));
    }
    Promise<O> answer = Promise.promise();
    items.add(item);
    answers.add(answer);
    if (!sending) {
      send();
    }
    return answer.future();
  }

  private void send() {
    int n = Math.min(max, items.size());
    List<I> batch = new ArrayList<>(items.subList(0, n));
    List<Promise<O>> promised = new ArrayList<>(answers.subList(0, n));
    items = new ArrayList<>(items.subList(n, items.size()));
    answers = new ArrayList<>(answers.subList(n, answers.size()));
    sending = true;
    Future<List<O>> sent;
    try {
      sent = call.apply(batch);
    } catch (RuntimeException e) {
      sent = Future.failedFuture(e);
    }
    sent.onComplete(ar -> done(promised, ar));
  }

  private void done(List<Promise<O>> promised, AsyncResult<List<O>> ar) {
    sending = false;
    if (!items.isEmpty()) {
      send();
    }
    for (int i = 0; i < promised.size(); i++) {
      if (ar.failed()) {
        promised.get(i).fail(ar.cause());
      } else if (i < ar.result().size()) {
        promised.get(i).complete(ar.result().get(i));
      } else {
        promised.get(i).fail(new IllegalStateException("the batch answered " + ar.result().size() + " of "
            + promised.size()));
      }
    }
  }
}
