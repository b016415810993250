package io.conveyor.bench.chaos;

import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Starts transactions over HTTP at a steady rate, spread round-robin over the live nodes. A start that gets
 * no answer (refused, timed out) or an error is tried again on the next node with the same externalId, so
 * the driver itself loses nothing: a 409 (the externalId is taken) means an earlier try got through.
 */
final class SteadyLoad {
  private static final long TIMEOUT_MS = 3000;
  private static final long RETRY_MS = 250;
  private final Rig rig;
  private final double rate;
  private final String run;
  /** externalId → txId ("" when acknowledged by a 409 without one). */
  final Map<String, String> acked = new ConcurrentHashMap<>();
  final Map<String, Boolean> pending = new ConcurrentHashMap<>();
  final AtomicLong retries = new AtomicLong();
  /** Calls the HTTP client had not completed 5 s past their timeout (tried again; see send). */
  final AtomicLong hung = new AtomicLong();
  private final Map<String, Integer> tries = new ConcurrentHashMap<>();
  final Map<Integer, AtomicInteger> failuresByStatus = new ConcurrentHashMap<>();
  /** The starts that got no answer (status 0), by what the HTTP client said, numbers left out (ports, ms). */
  final Map<String, AtomicInteger> noAnswerBy = new ConcurrentHashMap<>();
  private final Map<Integer, Long> avoidUntil = new ConcurrentHashMap<>();
  private final AtomicInteger next = new AtomicInteger();
  private volatile long giveUpAt = Long.MAX_VALUE;
  private volatile boolean stopped;
  private long startedAt;
  private int started;

  SteadyLoad(Rig rig, double rate, String run) {
    this.rig = rig;
    this.rate = rate;
    this.run = run;
  }

  /** Begins starting rate transactions a second until stop. */
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
      String externalId = run + "-" + started++;
      pending.put(externalId, true);
      send(externalId);
    }
    rig.driver.vertx().setTimer(10, t -> tick());
  }

  /** Stops new starts; retries of pending ones go on until giveUpMs from now. */
  void stop(long giveUpMs) {
    stopped = true;
    giveUpAt = System.currentTimeMillis() + giveUpMs;
  }

  int started() {
    return started;
  }

  private void send(String externalId) {
    NodeProc node = pick();
    if (node == null) {
      retryLater(externalId);
      return;
    }
    JsonObject body = new JsonObject().put("type", Rig.PIPELINE).put("externalId", externalId)
        .put("input", new JsonObject().put("externalId", externalId)).put("webhook", rig.driver.webhookUrl());
    // Each try of an externalId has a number: an answer (or the guard below) of a try that is no longer the
    // latest is ignored, so one start never has two retry chains.
    int attempt = tries.merge(externalId, 1, Integer::sum);
    // The guard: a call the HTTP client has not completed long after its timeouts (seen under a load average of
    // 20+: 8 of 4,504 starts never answered, never failed) is counted and tried again, never left pending.
    long guard = rig.driver.vertx().setTimer(TIMEOUT_MS + 5000, t -> {
      if (pending.containsKey(externalId) && tries.get(externalId) == attempt) {
        hung.incrementAndGet();
        retryLater(externalId);
      }
    });
    rig.driver.call(node.httpPort, HttpMethod.POST, "/api/v1/transactions", body, TIMEOUT_MS).onComplete(ar -> {
      rig.driver.vertx().cancelTimer(guard);
      if (!pending.containsKey(externalId) || tries.get(externalId) != attempt) {
        return;
      }
      Driver.Reply r = ar.succeeded() ? ar.result() : new Driver.Reply(0, String.valueOf(ar.cause()));
      if (r.ok() || r.status() == 409) {
        acked.put(externalId, r.ok() ? r.json().getString("txId", "") : "");
        pending.remove(externalId);
        return;
      }
      failuresByStatus.computeIfAbsent(r.status(), k -> new AtomicInteger()).incrementAndGet();
      if (r.status() == 0) {
        String why = r.body().replaceAll("\\d+", "N");
        noAnswerBy.computeIfAbsent(why.substring(0, Math.min(80, why.length())), k -> new AtomicInteger())
            .incrementAndGet();
        avoidUntil.put(node.httpPort, System.currentTimeMillis() + 5000);
      }
      retryLater(externalId);
    });
  }

  private void retryLater(String externalId) {
    if (System.currentTimeMillis() > giveUpAt) {
      return; // stays pending: never acknowledged
    }
    retries.incrementAndGet();
    rig.driver.vertx().setTimer(RETRY_MS, t -> send(externalId));
  }

  /**
   * The next node not killed that has not just failed to answer (any if all have): a paused node is found
   * by its silence, as a client would find it.
   */
  private NodeProc pick() {
    List<NodeProc> live = rig.nodes.stream().filter(NodeProc::running).toList();
    if (live.isEmpty()) {
      return null;
    }
    long now = System.currentTimeMillis();
    for (int i = 0; i < live.size(); i++) {
      NodeProc n = live.get(Math.floorMod(next.getAndIncrement(), live.size()));
      if (avoidUntil.getOrDefault(n.httpPort, 0L) < now) {
        return n;
      }
    }
    return live.get(Math.floorMod(next.getAndIncrement(), live.size()));
  }

  /** For the progress line. */
  Supplier<String> progress() {
    return () -> "started " + started + ", acknowledged " + acked.size() + ", pending " + pending.size()
        + ", retries " + retries.get() + (hung.get() > 0 ? ", calls hung " + hung.get() : "");
  }
}
