package io.conveyor.queue;

import io.conveyor.bus.Addresses;
import io.conveyor.bus.Registration;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.Dequeued;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.pipeline.PipelineRunner;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.QueueStore;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.RunStore;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes work of this node's group, never more than its free worker slots, and runs it. One dequeue is in
 * flight at a time; a busy node takes again as slots free up, an idle one blocks on its group's ring list
 * (on a connection of its own) until a start or another node rings it, or idleWait passes.
 */
public final class DequeueVerticle extends VerticleBase implements io.conveyor.redis.Handoff {
  private static final Logger log = LoggerFactory.getLogger(DequeueVerticle.class);
  private final RedisAccess redis;
  private final PipelineCatalog catalog;
  private final NodeMetrics metrics;
  private final Settings settings;
  private final String group;
  private final int workers;
  private final AtomicInteger busy;
  /**
   * The transactions running here, with how many runs of each: after a fence the node may take back a
   * transaction whose old run has not ended yet, and each run holds a worker slot until it ends.
   */
  private final Map<String, Integer> running = new HashMap<>();
  private int runs;
  /**
   * Guards the worker slots: runs (written on this verticle's context only, read by reserve from any thread),
   * reserved (slots start calls hold for a hand-off), asking (what the dequeue out now asked for) and handoffLost.
   */
  private final Object slots = new Object();
  private int reserved;
  private int asking;
  /** A start call that reserved slots failed: what it may have handed over is put back before the next take. */
  private boolean handoffLost;
  private io.vertx.core.Context context;
  private final Promise<Void> drained = Promise.promise();
  private StoreContext redisContext;
  private QueueStore store;
  private PipelineRunner runner;
  private RedisConnection ring;
  private boolean taking;
  /** Blocked on the ring (or, with several partitions, idle until one rings): the last take found no work. */
  private volatile boolean waiting;
  /** The ring rang (or its wait ended) since the last dequeue went out: take again before blocking. */
  private boolean wakePending;
  private volatile boolean stopping;
  /** Redis took this node over: no work is taken until the heartbeat has registered the node again. */
  private volatile boolean fenced;
  /** The ring connection is being replaced. */
  private boolean ringLost;
  private final Registration registration;
  private final io.conveyor.trace.Tracing tracing;
  /** A take waits for the heartbeat to confirm the node (see Registration): looked at again shortly. */
  private boolean awaitingBeat;
  /** How many partitions there are; with more than one, rings come by subscription (see connectRing). */
  private int parts;
  /** Partitions where work is known to wait (a ring was heard, or a take left some), oldest first. */
  private final java.util.LinkedHashSet<Integer> hot = new java.util.LinkedHashSet<>();
  /**
   * Rings heard per partition. A ring travels on the subscription, the dequeue's reply on another
   * connection, so a ring for work queued after a dequeue ran there can arrive before that dequeue's reply;
   * the reply then says "empty", but must not make the partition cold (see take).
   */
  private final Map<Integer, Long> rings = new HashMap<>();
  /** Each partition's ring channel, to the partition. */
  private final Map<String, Integer> ringChannels = new HashMap<>();
  /** The next partition an idle node looks into when no ring came within idleWait. */
  private int sweepNext;
  /** With several partitions, an idle node looks into one every this many idle waits. */
  private static final int SWEEP_WAITS = 5;
  private boolean sweep;
  private long idleTimer = -1;

  /**
   * This node's id and group, its worker slots, how long an idle wait lasts at most, how long a stop lets
   * running work finish, and what the runner needs (the default step timeout, the archive delay).
   */
  public record Settings(String nodeId, String group, int workers, Duration idleWait, Duration drainTime,
                         Duration stepTimeout, Duration archiveDelay, io.conveyor.config.Config.Limits limits) {
    /** With the limits' defaults. */
    public Settings(String nodeId, String group, int workers, Duration idleWait, Duration drainTime,
                    Duration stepTimeout, Duration archiveDelay) {
      this(nodeId, group, workers, idleWait, drainTime, stepTimeout, archiveDelay,
          io.conveyor.config.Config.Limits.DEFAULTS);
    }
  }

  /** busy is kept up to date with the transactions running here (the heartbeat and metrics read it). */
  public DequeueVerticle(RedisAccess redis, PipelineCatalog catalog, NodeMetrics metrics, Settings settings,
                         AtomicInteger busy, Registration registration, io.conveyor.trace.Tracing tracing) {
    this.registration = registration;
    this.tracing = tracing;
    this.redis = redis;
    this.catalog = catalog;
    this.metrics = metrics;
    this.settings = settings;
    this.group = settings.group();
    this.workers = settings.workers();
    this.busy = busy;
  }

  @Override
  public Future<?> start() {
    context = vertx.getOrCreateContext();
    redisContext = redis.open(vertx);
    parts = redisContext.keys().partitions();
    for (int p = 0; p < parts; p++) {
      ringChannels.put(redisContext.keys().qRingL(p, group), p);
    }
    sweepNext = java.util.concurrent.ThreadLocalRandom.current().nextInt(parts);
    store = new QueueStore(redisContext);
    runner = new PipelineRunner(vertx, new RunStore(redisContext, settings.limits().maxErrors()),
        new PipelineStore(redisContext), catalog,
        new PipelineRunner.Settings(settings.nodeId(), settings.stepTimeout(), settings.archiveDelay(),
            redisContext.clock(), settings.limits().maxPayloadBytes()), metrics, tracing);
    vertx.eventBus().<Object>localConsumer(Addresses.NODE_FENCE, m -> fence().onComplete(ar -> {
      if (ar.succeeded()) {
        m.reply(ar.result());
      } else {
        m.fail(500, ar.cause().getMessage());
      }
    }));
    vertx.eventBus().<String>localConsumer(Addresses.TX_CANCEL_REQUESTED, m -> runner.cancelRequested(m.body()));
    vertx.eventBus().localConsumer(Addresses.NODE_REGISTERED, m -> {
      if (fenced) {
        fenced = false;
        log.info("taking work of group {} again", group);
        take();
      }
    });
    return connectRing().onSuccess(c -> take());
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
    return store.requeueLost(settings.nodeId(), Set.copyOf(running.keySet())).onSuccess(n -> log.warn("fenced: "
        + "stopped taking work; {} transactions held here but not run went back on their queues; {} runs under way "
        + "go on where they are still this node's and are refused where they were taken over", n, runs));
  }

  /**
   * The ring connection carries a name, so an operator (or a test) sees which node blocks on it. With one
   * partition the node blocks on its group's ring list there (BLPOP). With several, one connection cannot
   * block on keys of many slots, so it subscribes to every partition's ring channel (a script publishes on
   * it when it rings); work may have come while it was not subscribed, so every partition counts as hot.
   */
  private Future<RedisConnection> connectRing() {
    return redisContext.link().dedicated().compose(c -> c.send(Request.cmd(Command.CLIENT).arg("SETNAME")
        .arg("conveyor-ring:" + settings.nodeId())).compose(ok -> {
          if (parts == 1) {
            return Future.succeededFuture(c);
          }
          c.handler(this::rang);
          c.exceptionHandler(e -> ringBroke(c, e.getMessage()));
          c.endHandler(v -> ringBroke(c, "closed"));
          java.util.List<Future<io.vertx.redis.client.Response>> each = new java.util.ArrayList<>();
          ringChannels.keySet().forEach(ch -> each.add(c.send(redisContext.keys().subscribe(ch))));
          return Future.all(each).map(x -> {
            for (int p = 0; p < parts; p++) {
              hot.add(p);
            }
            return c;
          });
        }).map(ok -> {
          ring = c;
          return c;
        }).onFailure(e -> c.close()));
  }

  /** A ring published in a partition: work waits there. */
  private void rang(io.vertx.redis.client.Response push) {
    if (!io.conveyor.redis.Keys.isMessage(push)) {
      return;
    }
    Integer p = ringChannels.get(push.get(1).toString());
    if (p == null) {
      return;
    }
    hot.add(p);
    rings.merge(p, 1L, Long::sum);
    if (waiting) {
      waiting = false;
      vertx.cancelTimer(idleTimer);
    }
    take();
  }

  private void ringBroke(RedisConnection c, String why) {
    if (c == ring && !stopping && !ringLost) {
      log.warn("the ring subscription was lost ({}); subscribing again", why);
      reconnectRing();
    }
  }

  /**
   * The ring connection broke: one reconnect at a time (a second would leave a connection nobody closes),
   * and no wait on the broken one meanwhile; the reconnect takes again when it is done, or tries again.
   */
  private void reconnectRing() {
    if (ringLost) {
      return;
    }
    ringLost = true;
    // the broken connection goes back to its pool, which drops it; once only: a second close (after a failed
    // reconnect) would give a cluster connection's pooled connections back twice, and the pool throws
    RedisConnection broken = ring;
    ring = null;
    if (broken != null) {
      broken.close();
    }
    vertx.setTimer(1000, t -> connectRing().onComplete(c -> {
      ringLost = false;
      if (c.failed() && !stopping) {
        reconnectRing();
      } else {
        take();
      }
    }));
  }

  private void take() {
    if (stopping || fenced || taking || writing >= workers || free() <= 0) {
      return;
    }
    if (waiting && parts == 1) {
      // blocked on the ring after a dequeue found every queue empty: whatever queues work since rings it, so a
      // run ending here has nothing to look for
      return;
    }
    if (handoffLost) {
      recoverHandoff();
      return;
    }
    if (!registration.recent()) {
      // a pause or an outage: whether this node is still registered is known at the next beat only
      if (!awaitingBeat) {
        awaitingBeat = true;
        vertx.setTimer(100, t -> {
          awaitingBeat = false;
          take();
        });
      }
      return;
    }
    int p;
    if (parts == 1) {
      p = 0;
    } else if (!hot.isEmpty()) {
      p = hot.iterator().next(); // the oldest hot partition, then to the back: each gets its turn
      hot.remove(p);
      hot.add(p);
    } else if (sweep) {
      sweep = false;
      p = sweepNext;
      sweepNext = (sweepNext + 1) % parts;
    } else {
      waitForWork();
      return;
    }
    taking = true;
    wakePending = false;
    int asked;
    synchronized (slots) {
      // and no more than can still hand their completions over without passing workers of them out at once
      asked = Math.min(workers - runs - reserved, workers - writing);
      asking = asked;
    }
    long ringsBefore = rings.getOrDefault(p, 0L);
    store.take(p, group, settings.nodeId(), asked).map(t -> {
      if (t.heldReadyMs() > 0) {
        ringWhenReady(p, t.heldReadyMs());
      }
      return t.txs();
    }).onComplete(ar -> {
      if (ar.failed()) {
        synchronized (slots) {
          asking = 0;
        }
        recoverLostTake(ar.cause());
        return;
      }
      synchronized (slots) {
        asking = 0;
        if (!fenced) {
          runs += ar.result().size();
        }
      }
      if (fenced) {
        // the fence's requeue usually went out after this dequeue and put all of it back, but not always (a
        // script reloaded after NOSCRIPT goes out later): put back what came, then let a take go again
        store.requeueLost(settings.nodeId(), Set.copyOf(running.keySet())).onComplete(r -> {
          taking = false;
          checkDrained();
          take();
        });
        return;
      }
      taking = false;
      run(ar.result());
      if (handoffLost) {
        recoverHandoff();
        checkDrained();
        return;
      }
      if (parts > 1) {
        if (ar.result().size() < asked && rings.getOrDefault(p, 0L) == ringsBefore) {
          hot.remove(p); // its queues were empty, and no ring came since: a start there rings
        }
        take();
      } else if (ar.result().size() < asked && !wakePending) {
        // fewer than asked means the script found every queue empty; a start after it rings, so block
        waitForWork();
      } else {
        take();
      }
      checkDrained();
    });
  }

  /** Per partition, when a ring for work held by a rate limit is set to go (ms, the node's clock). */
  private final Map<Integer, Long> heldRings = new HashMap<>();

  /**
   * Work held by a rate limit gets a token in ms: ring the group then, so an idle node (this one or another)
   * takes it at once rather than at the next start or idleWait. One ring per partition is set at a time.
   */
  private void ringWhenReady(int p, long ms) {
    long at = redisContext.clock().millis() + ms;
    Long set = heldRings.get(p);
    if (set != null && set <= at) {
      return;
    }
    heldRings.put(p, at);
    vertx.setTimer(ms, t -> {
      if (!Long.valueOf(at).equals(heldRings.get(p))) {
        return;
      }
      heldRings.remove(p);
      if (!stopping) {
        store.ringAll(p, group).onFailure(e -> log.debug("ringing for held work: {}", e.getMessage()));
      }
    });
  }

  /**
   * A failed dequeue may have taken work whose reply never came: put back what this node holds but does
   * not run. No other dequeue is out meanwhile (taking stays set), so nothing in flight is put back.
   */
  private void recoverLostTake(Throwable cause) {
    log.warn("dequeue from group {} failed ({}); checking for work it took, then trying again", group,
        cause.getMessage());
    store.requeueLost(settings.nodeId(), Set.copyOf(running.keySet())).onComplete(r -> {
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
    long now = redisContext.clock().millis();
    for (Dequeued tx : txs) {
      if (tx.attempt() == 1 && tx.unreadable() == null) {
        metrics.dequeueWait(Duration.ofMillis(now - tx.created()));
      }
    }
    // all of them are running before any starts: a run that ends at once must not see the others as not run
    // (a put-back of what is held but not run would take them), nor take again before the caller decides
    for (Dequeued tx : txs) {
      running.merge(tx.txId(), 1, Integer::sum);
    }
    inRun = true;
    try {
      for (Dequeued tx : txs) {
        boolean[] ended = {false};
        runner.run(tx, () -> {
          ended[0] = true;
          ending();
        }).onComplete(done -> release(tx.txId(), ended[0]));
      }
    } finally {
      inRun = false;
    }
    busy.set(runs + writing);
  }

  /** Inside run: a run that ends there frees its slot, and the caller of run takes again when it is done. */
  private boolean inRun;

  /**
   * A run handed its completion to Redis: its step is done, so its worker slot is free and the next take goes
   * out now, together with that write rather than after it (one round trip per run instead of two). The run
   * stays in running (and inflightZ) until the write lands. A take asks for at most workers less the runs and
   * workers less the writes out, so runs stay within workers and runs + writing within twice that.
   */
  private void ending() {
    synchronized (slots) {
      runs--;
    }
    writing++;
    if (!inRun) {
      take();
    }
  }

  /** Runs whose completion is out (see ending); written on this verticle's context, read by reserve too. */
  private volatile int writing;

  private void release(String txId, boolean ended) {
    running.computeIfPresent(txId, (id, n) -> n > 1 ? n - 1 : null);
    if (ended) {
      writing--;
    } else {
      synchronized (slots) {
        runs--;
      }
    }
    busy.set(runs + writing);
    take();
    checkDrained();
  }

  /**
   * Blocks on the ring; whatever ends the wait (a token, the timeout, an error) leads to another take. With
   * several partitions the subscription rings instead; with no ring for five idleWaits, the node looks into
   * one partition (in turn), in case a ring was lost.
   */
  private void waitForWork() {
    if (stopping || waiting || ringLost) {
      return;
    }
    waiting = true;
    if (parts > 1) {
      // a safety net only (rings come by subscription): five idle waits between looks keeps an idle node cheap
      idleTimer = vertx.setTimer(settings.idleWait().toMillis() * SWEEP_WAITS, t -> {
        waiting = false;
        sweep = true;
        take();
      });
      return;
    }
    double seconds = settings.idleWait().toMillis() / 1000.0;
    ring.send(Request.cmd(Command.BLPOP).arg(redisContext.keys().qRingL(0, group)).arg(seconds)).onComplete(ar -> {
      waiting = false;
      if (ar.failed()) {
        if (!stopping) {
          log.warn("waiting for work failed ({}); reconnecting", ar.cause().getMessage());
          reconnectRing();
        }
        return;
      }
      if (ar.result() != null && (writing >= workers || free() <= 0)) {
        // full since the wait began (running, or slots reserved by a start): hand the token on to a node that has
        // room
        store.ring(0, group);
      }
      wakePending = true;
      take();
    });
  }

  /** Worker slots neither running nor reserved. */
  private int free() {
    synchronized (slots) {
      return workers - runs - reserved - asking;
    }
  }

  private int reservedNow() {
    synchronized (slots) {
      return reserved;
    }
  }

  @Override
  public String nodeId() {
    return settings.nodeId();
  }

  @Override
  public String group() {
    return group;
  }

  /**
   * Offered only while this node waits for work: its last take found every queue empty, so a start of its group
   * likely finds them empty too. A busy node keeps its slots for its own takes.
   */
  @Override
  public int reserve(int n) {
    if (!waiting || stopping || fenced || writing >= workers || !registration.recent()) {
      return 0;
    }
    synchronized (slots) {
      int granted = Math.min(Math.min(n, workers - runs - reserved - asking), workers - writing);
      if (handoffLost || granted <= 0) {
        return 0;
      }
      reserved += granted;
      return granted;
    }
  }

  @Override
  public void handed(int n, List<Dequeued> txs) {
    context.runOnContext(v -> {
      boolean late = drained.future().isComplete();
      synchronized (slots) {
        reserved -= n;
        if (!fenced && !late) {
          runs += txs.size();
        }
      }
      if (late) {
        // the node stopped taking work and its drain is over: what came stays in its inflightZ, where the stop's
        // put-back or, after it, the reaper finds it
        return;
      }
      if (fenced) {
        // taken over meanwhile: what came goes back on its queue, as with a dequeue's reply (see take)
        if (!txs.isEmpty()) {
          synchronized (slots) {
            handoffLost = true;
          }
        }
      } else {
        run(txs);
      }
      if (handoffLost) {
        recoverHandoff();
      } else {
        take(); // slots it did not use are free again
      }
      checkDrained();
    });
  }

  @Override
  public void lost(int n) {
    context.runOnContext(v -> {
      synchronized (slots) {
        reserved -= n;
        handoffLost = true;
      }
      recoverHandoff();
      checkDrained();
    });
  }

  /**
   * A start call's hand-off may have been lost: once no dequeue and no other hand-off is out (either may bring
   * work not yet in running), what this node holds in inflightZ but does not run goes back on its queue.
   */
  private void recoverHandoff() {
    if (taking || reservedNow() > 0) {
      return; // the take's reply, or the last hand-off's, comes back here
    }
    taking = true;
    store.requeueLost(settings.nodeId(), Set.copyOf(running.keySet())).onComplete(r -> {
      if (r.succeeded()) {
        synchronized (slots) {
          handoffLost = false;
        }
        if (r.result() > 0) {
          log.info("put {} transactions of a start whose reply was lost back on their queues", r.result());
        }
      }
      vertx.setTimer(r.succeeded() ? 1 : 1000, t -> {
        taking = false;
        if (handoffLost) {
          recoverHandoff();
        } else {
          take();
        }
        checkDrained();
      });
    });
  }

  private void checkDrained() {
    if (stopping && !taking && runs == 0 && writing == 0 && reservedNow() == 0) {
      drained.tryComplete();
    }
  }

  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(idleTimer);
    checkDrained();
    long drainMs = Math.max(1, settings.drainTime().toMillis());
    long timer = vertx.setTimer(drainMs, t -> drained.tryComplete());
    return drained.future().eventually(() -> {
      vertx.cancelTimer(timer);
      // what did not finish in time goes back on its queue now, attempt raised, for another node to run
      return store.requeueLost(settings.nodeId(), Set.of()).map(n -> {
        if (n > 0) {
          log.warn("stopped with {} transactions unfinished: put back on their queues", n);
        }
        return n;
      }).recover(e -> {
        log.warn("could not put back unfinished work ({}); the reaper will", e.getMessage());
        return Future.succeededFuture(0);
      });
    }).eventually(() -> (ring == null ? Future.succeededFuture() : ring.close())
        .transform(ar -> redisContext.close()));
  }
}
