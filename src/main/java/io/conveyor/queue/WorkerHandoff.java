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
 * call (a batch of up to Batcher.MAX starts in one partition), so the cost is two context hops per call.
 */
final class WorkerHandoff implements Handoff {
  private final Context workers;
  private final String nodeId;
  private final String group;
  private final IntUnaryOperator reserve;
  private final BiConsumer<Integer, List<Dequeued>> handed;
  private final IntConsumer lost;

  /** The dequeue verticle's side of each call, run on its context (workers) only. */
  WorkerHandoff(Context workers, String nodeId, String group, IntUnaryOperator reserve,
                BiConsumer<Integer, List<Dequeued>> handed, IntConsumer lost) {
    this.workers = workers;
    this.nodeId = nodeId;
    this.group = group;
    this.reserve = reserve;
    this.handed = handed;
    this.lost = lost;
  }

  @Override
  public String nodeId() {
    return nodeId;
  }

  @Override
  public String group() {
    return group;
  }

  @Override
  public Future<Integer> reserve(int n) {
    Context caller = Vertx.currentContext();
    if (caller == workers) {
      return Future.succeededFuture(reserve.applyAsInt(n));
    }
    Promise<Integer> answer = Promise.promise();
    workers.runOnContext(v -> {
      int granted = reserve.applyAsInt(n);
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
    workers.runOnContext(v -> handed.accept(reserved, txs));
  }

  @Override
  public void lost(int reserved) {
    workers.runOnContext(v -> lost.accept(reserved));
  }
}
