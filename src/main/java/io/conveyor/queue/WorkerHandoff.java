package io.conveyor.queue;

import io.conveyor.model.Dequeued;
import io.conveyor.redis.Handoff;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.IntConsumer;
import java.util.function.IntUnaryOperator;

/**
 * The hand-off as the workers see it: a start call on any context asks, and the dequeue verticle answers on
 * its own context, where its slots live; the answer comes back on the caller's context. One request per start
 * call (a batch of up to Batcher.MAX starts in one partition), so the cost is two context hops per call. The
 * dequeue verticle's side of each call (reserveForStart, handedByStart, lostByStart) runs on its context, workers.
 */
record WorkerHandoff(Context workers, String nodeId, String group, IntUnaryOperator reserveForStart,
                     BiConsumer<Integer, List<Dequeued>> handedByStart, IntConsumer lostByStart) implements Handoff {

  @Override
  public Future<Integer> reserve(int n) {
    Context caller = Vertx.currentContext();
    if (caller == workers) {
      return Future.succeededFuture(reserveForStart.applyAsInt(n));
    }
    Promise<Integer> answer = Promise.promise();
    workers.runOnContext(v -> {
      int granted = reserveForStart.applyAsInt(n);
      if (caller == null) {
        answer.complete(granted);
      } else {
        caller.runOnContext(w -> answer.complete(granted));
      }
    });
    return answer.future();
  }

  @Override
  public void handed(int reserved, List<Dequeued> txs) {
    workers.runOnContext(v -> handedByStart.accept(reserved, txs));
  }

  @Override
  public void lost(int reserved) {
    workers.runOnContext(v -> lostByStart.accept(reserved));
  }
}
