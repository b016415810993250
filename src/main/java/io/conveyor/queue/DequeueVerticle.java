package io.conveyor.queue;

import io.conveyor.bus.Addresses;
import io.conveyor.config.Config;
import io.conveyor.lease.Registration;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.Dequeued;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.redis.Handoff;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.QueueStore;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.RunStore;
import io.conveyor.redis.StoreContext;
import io.conveyor.trace.Tracing;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes work of this node's group into its free worker slots and runs it: at most one dequeue out per partition
 * (PartitionTakes), each asking its share of the free slots; a busy node takes again as slots free up, an idle one
 * waits on its ring until a start or another node rings it, or idleWait passes. An actor: its fields are touched on
 * its own context only. Starts reach its slots by request (WorkerHandoff), the heartbeat and the fence by local
 * message, and the busy count leaves it as a metric.
 */
public final class DequeueVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(DequeueVerticle.class);
  /** With several partitions, an idle node looks into one every this many idle waits. */
  private static final int SWEEP_WAITS = 5;
  private final RedisAccess redis;
  private final PipelineCatalog catalog;
  private final NodeMetrics metrics;
  private final Settings settings;
  private final String group;
  private final Registration registration;
  private final Tracing tracing;
  private final WorkerSlots slots;
  private final Promise<Void> drained = Promise.promise();
  private StoreContext redisContext;
  private QueueStore store;
  private LostWork lost;
  private PipelineRunner runner;
  private WorkerRuns runs;
  private RingConnection ring;
  private PartitionRotation rotation;
  private HeldRings heldRings;
  private Handoff handoff = Handoff.NONE;
  private int parts;
  private PartitionTakes takes;
  /** Partitions where a start's hand-off may have been lost: put back there before a take goes there. */
  private LostHandoffs lostHandoffs;
  /** Waiting on the ring (or, with several partitions, idle until one rings): the last take found no work. */
  private boolean waiting;
  /** The ring rang (or its wait ended) since the last dequeue went out: take again before blocking. */
  private boolean wakePending;
  private boolean stopping;
  /** Redis took this node over: no work is taken until the heartbeat has registered the node again. */
  private boolean fenced;
  /** A take waits for the heartbeat to confirm the node (see Registration): looked at again shortly. */
  private boolean awaitingBeat;
  private long idleTimer = -1;

  /**
   * This node's id and group, its worker slots, how long an idle wait lasts at most, how long a stop lets
   * running work finish, and what the runner needs (the default step timeout, the archive delay, the limits).
   */
  public record Settings(String nodeId, String group, int workers, Duration idleWait, Duration drainTime,
                         Duration stepTimeout, Duration archiveDelay, Config.Limits limits) {
  }

  public DequeueVerticle(RedisAccess redis, PipelineCatalog catalog, NodeMetrics metrics, Settings settings,
                         Registration registration, Tracing tracing) {
    this.redis = redis;
    this.catalog = catalog;
    this.metrics = metrics;
    this.settings = settings;
    this.group = settings.group();
    this.registration = registration;
    this.tracing = tracing;
    this.slots = new WorkerSlots(settings.workers());
  }

  /**
   * This node's workers as its starts reach them (see Handoff): set once start() is done, answered on this
   * verticle's context. Handoff.NONE before.
   */
  public Handoff handoff() {
    return handoff;
  }

  @Override
  public Future<?> start() {
    redisContext = redis.open(vertx);
    parts = redisContext.keys().partitions();
    store = new QueueStore(redisContext);
    lost = new LostWork(store, settings.nodeId(), slots);
    lostHandoffs = new LostHandoffs(vertx, lost, parts);
    runner = new PipelineRunner(vertx, new RunStore(redisContext),
        new PipelineStore(redisContext), catalog,
        new PipelineRunner.Settings(settings.nodeId(), settings.stepTimeout(), settings.archiveDelay(),
            redisContext.clock(), redisContext.ticker(), settings.limits().maxPayloadBytes()), metrics, tracing);
    runs = new WorkerRuns(runner, slots, metrics, redisContext.clock(), () -> {
      take();
      checkDrained();
    });
    rotation = new PartitionRotation(parts, ThreadLocalRandom.current().nextInt(parts));
    heldRings = new HeldRings(vertx, store, redisContext.clock(), group, () -> stopping);
    takes = new PartitionTakes(store, heldRings, redisContext.health(), group, settings.nodeId(), parts);
    ring = new RingConnection(vertx, redisContext, settings.nodeId(), group, this::rang, this::rang,
        this::take);
    listen();
    handoff = new WorkerHandoff(context, settings.nodeId(), group, this::reserveForStart, this::handedByStart,
        this::lostByStart);
    return ring.connect().onSuccess(c -> take());
  }

  /** A ring was heard in partition p (by subscription): take from there, now. */
  private void rang(int p) {
    rotation.rang(p);
    if (waiting) {
      waiting = false;
      vertx.cancelTimer(idleTimer);
    }
    take();
  }

  /** The fence, cancels to pass to the runner, and the word that the node is registered again. */
  private void listen() {
    vertx.eventBus().<Object>localConsumer(Addresses.NODE_FENCE, m -> fence().onSuccess(m::reply)
        .onFailure(e -> m.fail(500, e.getMessage())));
    vertx.eventBus().<String>localConsumer(Addresses.TX_CANCEL_REQUESTED, m -> runner.cancelRequested(m.body()));
    vertx.eventBus().localConsumer(Addresses.NODE_REGISTERED, m -> {
      if (fenced) {
        fenced = false;
        log.info("taking work of group {} again", group);
        take();
      }
    });
  }

  /**
   * The node was taken over: take nothing more until it is registered again. What the reaper took over is
   * gone from inflightZ already, and its runs here find their next write refused. What is still in this
   * node's inflightZ (taken after the takeover, or from a Redis that came back empty) stays its own while it
   * runs here; only what is held but not run (the reply of a dequeue that was lost, or came while fenced)
   * goes back on its queue, attempt raised. Putting back the rest would only run it twice.
   */
  private Future<Integer> fence() {
    fenced = true;
    return lost.putBack("held here but not run when fenced").onSuccess(n -> log.warn("fenced: stopped taking "
        + "work; {} runs under way go on where they are still this node's and are refused where they were taken "
        + "over", slots.runs()));
  }

  private void take() {
    if (takeOne()) {
      take(); // one take per partition that may take now (at most parts deep)
    }
  }

  /** Sends a take in a partition where none is out; false when no (other) take may go now. */
  private boolean takeOne() {
    if (stopping || fenced || slots.full()) {
      return false;
    }
    if (waiting && parts == 1) {
      // blocked on the ring after a dequeue found every queue empty: whatever queues work since rings it, so a
      // run ending here has nothing to look for
      return false;
    }
    if (lostHandoffs.any()) {
      recoverHandoff(); // and take on in the partitions not held
    }
    if (!registration.mayWork()) {
      awaitBeat();
      return false;
    }
    int p = rotation.next(q -> takes.busy(q) || lostHandoffs.held(q));
    if (p == PartitionRotation.NONE) {
      if (takes.out() == 0 && !lostHandoffs.any()) {
        waitForWork();
      }
      return false;
    }
    // no more than its partition's share of the free slots (a take that hangs holds no more), and no more than
    // can still hand their completions over
    int asked = slots.ask(parts);
    if (asked == 0) {
      return false;
    }
    wakePending = false;
    long ringsBefore = rotation.ringsHeard(p);
    takes.take(p, asked).onComplete(ar -> {
      slots.taken(asked, ar.succeeded() && !fenced ? ar.result().size() : 0);
      if (ar.failed()) {
        recoverLostTake(p, ar.cause());
      } else if (fenced) {
        putBackWhileFenced(p);
      } else {
        taken(p, asked, ar.result(), ringsBefore);
      }
    });
    return true;
  }

  /** A dequeue's reply came: run it, then take again, or wait when it found every queue empty. */
  private void taken(int p, int asked, List<Dequeued> txs, long ringsBefore) {
    takes.end(p);
    runs.run(txs);
    if (lostHandoffs.any()) {
      recoverHandoff();
    }
    if (parts > 1) {
      if (txs.size() < asked) {
        rotation.emptied(p, ringsBefore);
      }
      take();
    } else if (txs.size() < asked && !wakePending && !lostHandoffs.any()) {
      // fewer than asked means the script found every queue empty; a start after it rings, so block
      waitForWork();
    } else {
      take();
    }
    checkDrained();
  }

  /**
   * A dequeue answered after the fence: the fence's put-back usually went out after it and put all of it back,
   * but not always (a script reloaded after NOSCRIPT goes out later): put back what came, then let a take go.
   */
  private void putBackWhileFenced(int p) {
    lost.putBack(p, "that came while fenced").onComplete(r -> {
      takes.end(p);
      checkDrained();
      take();
    });
  }

  /** A pause or an outage: whether this node is still registered (and its view whole) is known at a beat only. */
  private void awaitBeat() {
    if (!awaitingBeat) {
      awaitingBeat = true;
      vertx.setTimer(100, t -> {
        awaitingBeat = false;
        take();
      });
    }
  }

  /**
   * A failed dequeue in p may have taken work whose reply never came: what this node holds there but does not run
   * goes back. p stays busy meanwhile, so nothing in flight is put back; the other partitions take on.
   */
  private void recoverLostTake(int p, Throwable cause) {
    log.warn("dequeue from group {} in partition {} failed ({}); checking for work it took, then trying again",
        group, p, cause.getMessage());
    lost.putBack(p, "taken by a lost dequeue").onComplete(r -> {
      vertx.setTimer(r.succeeded() ? 100 : 1000, t -> {
        if (r.failed()) {
          recoverLostTake(p, r.cause());
          return;
        }
        takes.end(p);
        take();
        checkDrained();
      });
    });
  }

  /**
   * Waits on the ring; whatever ends the wait (a token, the timeout) leads to another take, an error to a
   * reconnect (which takes when done). With several partitions the subscription rings instead; with no ring for
   * five idle waits, the node looks into one partition (in turn), in case a ring was lost.
   */
  private void waitForWork() {
    if (stopping || waiting || ring.lost()) {
      return;
    }
    waiting = true;
    if (parts > 1) {
      // a safety net only (rings come by subscription): five idle waits between looks keeps an idle node cheap
      idleTimer = vertx.setTimer(settings.idleWait().toMillis() * SWEEP_WAITS, t -> {
        waiting = false;
        rotation.sweepDue();
        take();
      });
      return;
    }
    ring.await(settings.idleWait()).onComplete(ar -> {
      waiting = false;
      if (ar.failed()) {
        return;
      }
      if (ar.result() && (slots.full() || !registration.mayWork())) {
        // full since the wait began (running, or slots reserved by a start), or held after a pause: hand the token
        // on to a node that can take
        store.ring(0, group);
      }
      wakePending = true;
      take();
    });
  }

  /**
   * A start call asks for slots (on this context, see WorkerHandoff). Offered only while this node waits for
   * work: its last take found every queue empty, so a start of its group likely finds them empty too. A busy
   * node keeps its slots for its own takes.
   */
  private int reserveForStart(int n) {
    if (!waiting || stopping || fenced || lostHandoffs.any() || !registration.mayWork()) {
      return 0;
    }
    return slots.reserve(n);
  }

  /** The start call answered: run what it handed over; the slots it did not use are free again. */
  private void handedByStart(int reserved, List<Dequeued> txs) {
    boolean late = drained.future().isComplete();
    slots.unreserve(reserved, fenced || late ? 0 : txs.size());
    if (late) {
      // the node stopped taking work and its drain is over: what came stays in its inflightZ, where the stop's
      // put-back or, after it, the reaper finds it
      return;
    }
    if (fenced) {
      // taken over meanwhile: what came goes back on its queue, as with a dequeue's reply (see take)
      if (!txs.isEmpty()) {
        lostHandoffs.lostAll();
      }
    } else {
      runs.run(txs);
    }
    if (lostHandoffs.any()) {
      recoverHandoff();
    }
    take();
    checkDrained();
  }

  /** The start call failed: whether it handed anything over is not known, so what is held but not run goes back. */
  private void lostByStart(int reserved) {
    slots.unreserve(reserved, 0);
    if (drained.future().isComplete()) {
      return; // stopped: the stop's put-back or, after it, the reaper finds what it left (see handedByStart)
    }
    lostHandoffs.lostAll();
    recoverHandoff();
    checkDrained();
  }

  /**
   * A start call's hand-off may have been lost: partition by partition, once no dequeue is out there and no other
   * hand-off is reserved (either may bring work not yet in running), what this node holds in its inflightZ there but
   * does not run goes back on its queue (LostHandoffs); the partitions not held take on meanwhile.
   */
  private void recoverHandoff() {
    lostHandoffs.recover(p -> !takes.busy(p) && slots.reserved() == 0, this::take);
  }

  private void checkDrained() {
    if (stopping && takes.out() == 0 && lostHandoffs.idle() && slots.idle()) {
      drained.tryComplete();
    }
  }

  @Override
  public Future<?> stop() {
    stopping = true;
    ring.stopping();
    vertx.cancelTimer(idleTimer);
    checkDrained();
    long drainMs = Math.max(1, settings.drainTime().toMillis());
    long timer = vertx.setTimer(drainMs, t -> drained.tryComplete());
    return drained.future().eventually(() -> {
      vertx.cancelTimer(timer);
      return lost.putBackAll();
    }).eventually(() -> ring.close().transform(ar -> redisContext.close()));
  }
}
