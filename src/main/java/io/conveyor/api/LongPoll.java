package io.conveyor.api;

import io.conveyor.bus.Addresses;
import io.conveyor.domain.Transactions;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.TxSummary;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;

/**
 * One long-poll (?wait=N): holds the answer until the transaction ends or N ms pass. It hears the end from this
 * node's notify verticle (Addresses.completedFor), which hears every node's completions on Redis; a completion
 * published while its partition's subscription was down is never heard, so when that subscription is back
 * (Addresses.NOTIFY_RESUBSCRIBED) the poll reads the status again. Lives on the context of the verticle that
 * serves the request.
 */
final class LongPoll {
  private final Vertx vertx;
  private final Transactions tx;
  private final NodeMetrics metrics;
  private final TxSummary now;
  /** Completed with the final summary, or with null when the status must be read again (a completion, the end). */
  private final Promise<TxSummary> ended = Promise.promise();
  /** Counted among the node's waiting long-polls (the gauge), from its second read until it answers. */
  private boolean counted;

  private LongPoll(Vertx vertx, Transactions tx, NodeMetrics metrics, TxSummary now) {
    this.vertx = vertx;
    this.tx = tx;
    this.metrics = metrics;
    this.now = now;
  }

  /** now: the transaction as last read, not final; answers it as it is when it ends, or after waitMs. */
  static Future<TxSummary> await(Vertx vertx, Transactions tx, NodeMetrics metrics, TxSummary now, long waitMs) {
    return new LongPoll(vertx, tx, metrics, now).await(waitMs);
  }

  /** It listens before it looks again, so a completion between the first read and the listening is not missed. */
  private Future<TxSummary> await(long waitMs) {
    // only this node listens: the Redis notify channel reaches every node, so nothing need cross the cluster
    MessageConsumer<JsonObject> completed = vertx.eventBus().localConsumer(Addresses.completedFor(now.owner()),
        m -> {
          if (now.txId().equals(m.body().getString("txId"))) {
            ended.tryComplete(null);
          }
        });
    int partition = tx.context().keys().partitionOf(now.txId());
    MessageConsumer<Integer> resubscribed = vertx.eventBus().localConsumer(Addresses.NOTIFY_RESUBSCRIBED, m -> {
      if (m.body() == partition) {
        readAgain();
      }
    });
    long timer = vertx.setTimer(waitMs, t -> ended.tryComplete(null));
    return Future.all(completed.completion(), resubscribed.completion()).compose(v -> status())
        .compose(again -> {
          if (again.status().isFinal()) {
            return Future.succeededFuture(again);
          }
          counted = true;
          metrics.longPoll(1);
          return ended.future().compose(s -> s != null ? Future.succeededFuture(s) : status());
        })
        .compose(tx::pollAnswered)
        .eventually(() -> {
          if (counted) {
            metrics.longPoll(-1);
          }
          vertx.cancelTimer(timer);
          return Future.join(completed.unregister(), resubscribed.unregister());
        });
  }

  /** Its completion may have gone unheard: the poll ends if the transaction has; a failed read leaves it waiting. */
  private void readAgain() {
    if (!ended.future().isComplete()) {
      status().onSuccess(s -> {
        if (s.status().isFinal()) {
          ended.tryComplete(s);
        }
      });
    }
  }

  private Future<TxSummary> status() {
    return tx.status(now.txId(), now.owner());
  }
}
