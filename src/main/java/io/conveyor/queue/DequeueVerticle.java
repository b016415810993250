package io.conveyor.queue;

import io.conveyor.Node;
import io.conveyor.model.Dequeued;
import io.conveyor.pipeline.PipelineRunner;
import io.conveyor.redis.RedisLink;
import io.conveyor.redis.TxStore;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes work of this node's group, never more than its free worker slots, and runs it. One dequeue is in
 * flight at a time; a busy node takes again as slots free up, an idle one blocks on its group's ring list
 * (on a connection of its own) until a start or another node rings it, or idleWait passes.
 */
public final class DequeueVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(DequeueVerticle.class);
  private final Node node;
  private final String group;
  private final int workers;
  private final Set<String> running = new HashSet<>();
  private final Promise<Void> drained = Promise.promise();
  private RedisLink link;
  private TxStore store;
  private PipelineRunner runner;
  private RedisConnection ring;
  private boolean taking;
  private boolean waiting;
  /** The ring rang (or its wait ended) since the last dequeue went out: take again before blocking. */
  private boolean wakePending;
  private boolean stopping;

  public DequeueVerticle(Node node) {
    this.node = node;
    this.group = node.config().node().group();
    this.workers = node.config().node().workers();
  }

  @Override
  public Future<?> start() {
    link = node.link(vertx);
    store = new TxStore(link, node.keys(), node.scripts(), node.clock());
    runner = new PipelineRunner(vertx, store, node.catalog(), new PipelineRunner.Settings(node.nodeId(),
        node.config().transactions().stepTimeout(), node.config().archive().delay(), node.clock()));
    return connectRing().onSuccess(c -> take());
  }

  /** The ring connection carries a name, so an operator (or a test) sees which node blocks on it. */
  private Future<RedisConnection> connectRing() {
    return link.dedicated().compose(c -> c.send(Request.cmd(Command.CLIENT).arg("SETNAME")
        .arg("conveyor-ring:" + node.nodeId())).map(ok -> {
          ring = c;
          return c;
        }));
  }

  private void take() {
    if (stopping || taking || running.size() >= workers) {
      return;
    }
    taking = true;
    wakePending = false;
    int asked = workers - running.size();
    store.dequeue(group, node.nodeId(), asked).onComplete(ar -> {
      if (ar.failed()) {
        recoverLostTake(ar.cause());
        return;
      }
      taking = false;
      run(ar.result());
      // fewer than asked means the script found every queue empty; a start after it rings, so block
      if (ar.result().size() < asked && !wakePending) {
        waitForWork();
      } else {
        take();
      }
      checkDrained();
    });
  }

  /**
   * A failed dequeue may have taken work whose reply never came: put back what this node holds but does
   * not run. No other dequeue is out meanwhile (taking stays set), so nothing in flight is put back.
   */
  private void recoverLostTake(Throwable cause) {
    log.warn("dequeue from group {} failed ({}); checking for work it took, then trying again", group,
        cause.getMessage());
    store.requeueLost(node.nodeId(), Set.copyOf(running)).onComplete(r -> {
      if (r.succeeded() && r.result() > 0) {
        log.info("put {} transactions taken by a lost dequeue back on their queues", r.result());
      }
      vertx.setTimer(r.succeeded() ? 100 : 1000, t -> {
        if (r.failed()) {
          recoverLostTake(r.cause());
          return;
        }
        taking = false;
        take();
        checkDrained();
      });
    });
  }

  private void run(List<Dequeued> txs) {
    long now = node.clock().millis();
    for (Dequeued tx : txs) {
      if (tx.attempt() == 1 && tx.unreadable() == null) {
        node.metrics().dequeueWait(java.time.Duration.ofMillis(now - tx.created()));
      }
    }
    for (Dequeued tx : txs) {
      running.add(tx.txId());
      runner.run(tx).onComplete(done -> release(tx.txId()));
    }
    node.busy().set(running.size());
  }

  private void release(String txId) {
    running.remove(txId);
    node.busy().set(running.size());
    take();
    checkDrained();
  }

  /** Blocks on the ring; whatever ends the wait (a token, the timeout, an error) leads to another take. */
  private void waitForWork() {
    if (stopping || waiting) {
      return;
    }
    waiting = true;
    double seconds = node.config().node().idleWait().toMillis() / 1000.0;
    ring.send(Request.cmd(Command.BLPOP).arg(node.keys().qRingL(group)).arg(seconds)).onComplete(ar -> {
      waiting = false;
      if (ar.failed()) {
        if (!stopping) {
          log.warn("waiting for work failed ({}); reconnecting", ar.cause().getMessage());
          vertx.setTimer(1000, t -> connectRing().onComplete(c -> take()));
        }
        return;
      }
      if (ar.result() != null && running.size() >= workers) {
        // full since the wait began: hand the token on to a node that has room
        store.ring(group);
      }
      wakePending = true;
      take();
    });
  }

  private void checkDrained() {
    if (stopping && !taking && running.isEmpty()) {
      drained.tryComplete();
    }
  }

  @Override
  public Future<?> stop() {
    stopping = true;
    checkDrained();
    long drainMs = Math.max(1, node.config().node().drainTime().toMillis());
    long timer = vertx.setTimer(drainMs, t -> drained.tryComplete());
    return drained.future().eventually(() -> {
      vertx.cancelTimer(timer);
      // what did not finish in time goes back on its queue now, attempt raised, for another node to run
      return store.requeueLost(node.nodeId(), Set.of()).map(n -> {
        if (n > 0) {
          log.warn("stopped with {} transactions unfinished: put back on their queues", n);
        }
        return n;
      }).recover(e -> {
        log.warn("could not put back unfinished work ({}); the reaper will", e.getMessage());
        return Future.succeededFuture(0);
      });
    }).eventually(() -> ring.close().transform(ar -> link.close()))
        .onComplete(ar -> node.dequeueStopped().tryComplete());
  }
}
