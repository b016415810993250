package io.conveyor.bench.chaos;

import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The redis-cluster scenarios' load: starts over HTTP at a steady rate, round-robin over the nodes, every other one
 * with an externalId. One with an externalId that fails (no answer, or an error) is tried again on the next node with
 * the same externalId after 250 ms, doubling to 2 s (a client that retried every 250 ms whatever befell it turned
 * a node that fell behind into a retry storm: 223,952 retries of 25,000 starts at 1,000/s), and its latency runs
 * from its first try to its
 * acknowledgement; one without is tried once (a second try could start it twice), and a failure is counted as such.
 * Every start is kept (Start) with its times, so latencies can be split by partition and by phase.
 */
final class PartitionLoad {
  private static final long TIMEOUT_MS = 3000;
  private static final long RETRY_MS = 250;
  private static final long MAX_RETRY_MS = 2000;

  /** One start: its externalId (null for none), times (System.nanoTime), answer and txId ("" until known). */
  static final class Start {
    final int seq;
    final String externalId;
    final long firstSent;
    volatile long lastSent;
    volatile long acked;
    volatile int status;
    volatile int tries;
    volatile String txId = "";
    /** A start without externalId whose one try failed: over, not acknowledged. */
    volatile boolean refused;

    Start(int seq, String externalId, long firstSent) {
      this.seq = seq;
      this.externalId = externalId;
      this.firstSent = firstSent;
      this.lastSent = firstSent;
    }

    boolean ok() {
      return acked != 0;
    }

    double latencyMs() {
      return (acked - firstSent) / 1e6;
    }
  }

  final Queue<Start> starts = new ConcurrentLinkedQueue<>();
  final AtomicLong retries = new AtomicLong();
  final AtomicInteger failedNoExternalId = new AtomicInteger();
  private final Rig rig;
  private final double rate;
  private final String run;
  private final AtomicInteger next = new AtomicInteger();
  private volatile long giveUpAt = Long.MAX_VALUE;
  private volatile boolean stopped;
  private long startedAt;
  private int started;

  PartitionLoad(Rig rig, double rate, String run) {
    this.rig = rig;
    this.rate = rate;
    this.run = run;
  }

  void start() {
    startedAt = System.nanoTime();
    rig.driver.vertx().runOnContext(v -> tick());
  }

  private void tick() {
    if (stopped) {
      return;
    }
    long due = (long) ((System.nanoTime() - startedAt) / 1e9 * rate);
    while (started < due) {
      int seq = started++;
      Start s = new Start(seq, seq % 2 == 0 ? run + "-" + seq : null, System.nanoTime());
      starts.add(s);
      send(s);
    }
    rig.driver.vertx().setTimer(10, t -> tick());
  }

  /** Stops new starts; retries of pending ones (with an externalId) go on until giveUpMs from now. */
  void stop(long giveUpMs) {
    stopped = true;
    giveUpAt = System.currentTimeMillis() + giveUpMs;
  }

  int started() {
    return started;
  }

  /** Starts neither acknowledged nor given up (a start without externalId is done after its one try). */
  long pending() {
    return starts.stream().filter(s -> !s.ok() && !s.refused).count();
  }

  private void send(Start s) {
    List<NodeProc> live = rig.nodes.stream().filter(NodeProc::running).toList();
    NodeProc node = live.get(Math.floorMod(next.getAndIncrement(), live.size()));
    JsonObject body = new JsonObject().put("type", Rig.PIPELINE).put("input", new JsonObject().put("n", s.seq));
    if (s.externalId != null) {
      body.put("externalId", s.externalId);
    }
    s.tries++;
    s.lastSent = System.nanoTime();
    rig.driver.call(node.httpPort, HttpMethod.POST, "/api/v1/transactions", body, TIMEOUT_MS).onComplete(ar -> {
      Driver.Reply r = ar.succeeded() ? ar.result() : new Driver.Reply(0, String.valueOf(ar.cause()));
      if (r.ok() || r.status() == 409 && s.externalId != null) {
        s.txId = r.ok() ? r.json().getString("txId", "") : "";
        s.status = r.status();
        s.acked = System.nanoTime();
        return;
      }
      if (s.externalId == null) {
        s.status = r.status() == 0 ? -1 : r.status(); // -1: no answer; either way this start is over
        s.refused = true;
        failedNoExternalId.incrementAndGet();
        return;
      }
      s.status = r.status();
      if (System.currentTimeMillis() < giveUpAt) {
        retries.incrementAndGet();
        rig.driver.vertx().setTimer(Math.min(MAX_RETRY_MS, RETRY_MS << Math.min(s.tries - 1, 4)), t -> send(s));
      }
    });
  }

  String progress() {
    long acked = starts.stream().filter(Start::ok).count();
    return "started " + started + ", acknowledged " + acked + ", retries " + retries.get()
        + ", failed without externalId " + failedNoExternalId.get();
  }
}
