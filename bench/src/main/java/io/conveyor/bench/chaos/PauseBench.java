package io.conveyor.bench.chaos;

import io.conveyor.bench.chaos.PauseStates.Pos;
import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;

/**
 * bench/pause (issue 34, pause acceptance): two node processes on a private Redis (AOF, appendfsync always), N
 * transactions of one capped pipeline spread over sleeping, retrying, queued and running, paused by one bulk
 * search, watched for a hold, a node killed and Redis killed and restarted while paused, then resumed by one
 * bulk search and watched to the end. See bench/README.md.
 */
public final class PauseBench {
  static final String PIPELINE = "pausebench";
  private static final String USAGE = "usage: bench/pause [--transactions N] [--cap C] [--hold 60s] [--keep]";
  private final Map<String, Object> figures = new LinkedHashMap<>();
  private final List<String[]> table = new ArrayList<>();
  private int startRetries;
  private int callRetries;

  private PauseBench() {
  }

  public static void main(String[] args) throws Exception {
    int n = 1000;
    int cap = 100;
    int hold = 60;
    boolean keep = false;
    try {
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--transactions" -> n = Integer.parseInt(args[++i]);
          case "--cap" -> cap = Integer.parseInt(args[++i]);
          case "--hold" -> hold = Integer.parseInt(args[++i].replaceFirst("s$", ""));
          case "--keep" -> keep = true;
          default -> throw new IllegalArgumentException("unknown option " + args[i]);
        }
      }
      if (n < 10 || n > 10_000 || cap < 1 || cap >= n / 2 || hold < 1 || hold > 3600) {
        throw new IllegalArgumentException("--transactions 10..10000, --cap 1..N/2-1, --hold 1s..3600s");
      }
    } catch (RuntimeException e) {
      System.err.println("bench/pause: " + e.getMessage() + "\n" + USAGE);
      System.exit(2);
      return;
    }
    System.setProperty("hazelcast.logging.type", "slf4j");
    if (org.slf4j.LoggerFactory.getILoggerFactory() instanceof ch.qos.logback.classic.LoggerContext c) {
      c.getLogger("com.hazelcast").setLevel(ch.qos.logback.classic.Level.OFF);
      c.getLogger("io.vertx.core.net.impl.ConnectionBase").setLevel(ch.qos.logback.classic.Level.OFF);
      c.getLogger("io.vertx.core.eventbus.impl.clustered").setLevel(ch.qos.logback.classic.Level.ERROR);
      // stdout carries the figures alone: the bench's own log lines (a blocked-thread warning) go to stderr
      c.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).iteratorForAppenders().forEachRemaining(a -> {
        if (a instanceof ch.qos.logback.core.ConsoleAppender<?> console) {
          console.stop();
          console.setTarget("System.err");
          console.start();
        }
      });
    }
    Path base = Files.createTempDirectory("pausebench-");
    PauseBench b = new PauseBench();
    boolean ok = false;
    try {
      ok = b.run(base, n, cap, hold);
    } catch (Exception e) {
      e.printStackTrace();
    } finally {
      Teardown.all();
      System.out.println(new JsonObject(b.figures).encode());
      System.out.println();
      System.out.println("| phase | figure | expected |");
      System.out.println("|---|---|---|");
      b.table.forEach(r -> System.out.println("| " + String.join(" | ", r) + " |"));
      System.err.println("bench/pause: logs " + (keep || !ok ? "kept in " + base : "deleted"));
      if (!keep && ok) {
        try (var tree = Files.walk(base)) {
          tree.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
    System.exit(ok ? 0 : 1);
  }

  private void fig(String name, Object value, String phase, String expected) {
    figures.put(name, value);
    table.add(new String[] {phase, name + " = " + value, expected});
    System.err.println("bench/pause: " + phase + ": " + name + " = " + value);
  }

  private boolean run(Path base, int n, int cap, int hold) throws Exception {
    // a sleeper's delay and a retry's backoff fall due in the middle of the hold (at least 10 s: a delay of up
    // to 5 s runs on a timer in its worker slot instead of sleeping)
    int due = Math.max(10, hold / 2);
    RedisServer redis = new RedisServer(Ports.free(), base.resolve("redis"), List.of("--appendfsync", "always"));
    redis.start();
    String hex = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    String cluster = "pausebench-" + hex;
    String prefix = cluster + ":";
    String apiKey = "pausebench-key-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    Files.createDirectories(base.resolve("pipelines"));
    Files.writeString(base.resolve("pipelines").resolve(PIPELINE + ".json"), pipeline(cap, due));
    Path clusterXml = Rig.clusterXml(base, Ports.freeRange(3), 3);
    Path logback = Rig.logback(base);
    Driver driver = Driver.start(clusterXml, cluster, apiKey, Ports.free(), 0);
    PauseSteps steps = new PauseSteps(driver.vertx());
    Map<String, String> env = new HashMap<>(Map.of("CONVEYOR_REDIS_URL", redis.url(),
        "CONVEYOR_REDIS_EMBEDDED", "never", "CONVEYOR_REDIS_PREFIX", prefix, "CONVEYOR_CLUSTER_NAME", cluster,
        "CONVEYOR_CLUSTER_CONFIG", clusterXml.toString(), "CONVEYOR_PIPELINES_DIR",
        base.resolve("pipelines").toString(), "CONVEYOR_API_KEYS", "bench:client+admin:" + apiKey));
    List<NodeProc> nodes = List.of(NodeProc.start("node0", Ports.free(), env, logback, base.resolve("node0.log")),
        NodeProc.start("node1", Ports.free(), env, logback, base.resolve("node1.log")));
    for (NodeProc p : nodes) {
      p.awaitStarted(180_000);
    }
    int api = nodes.get(0).httpPort;
    PauseStates states = new PauseStates(redis, prefix);
    System.err.println("bench/pause: private Redis on " + redis.port() + ", nodes up, logs under " + base);

    // 1. sleepers and retriers first (each runs step 0 once and sleeps), then the runs: cap of them hold a
    // slot in a step the driver does not answer yet, the rest queue behind the cap
    int sleepers = n * 3 / 10;
    int retriers = n * 3 / 10;
    List<String> ids = new ArrayList<>(start(driver, api, "sleep", sleepers));
    ids.addAll(start(driver, api, "retry", retriers));
    await("the sleepers and retriers to sleep", 60_000, () -> {
      Map<String, Pos> s = states.read(ids);
      return s != null && s.values().stream().allMatch(p -> p.state().equals("sleeping"));
    });
    ids.addAll(start(driver, api, "run", n - sleepers - retriers));
    await(cap + " steps held and the rest queued", 60_000, () -> {
      Map<String, Pos> s = states.read(ids);
      return steps.held() == cap && s != null && PauseStates.phases(s).getOrDefault("queued", 0)
          == n - sleepers - retriers - cap;
    });
    Map<String, Pos> before = states.read(ids);
    fig("before", PauseStates.phases(before).toString(), "started", "spread over the four phases");
    fig("slotsBefore", states.slots(), "started", "the cap, " + cap);

    // 2. one bulk pause by search
    JsonObject paused = call(driver, api, "/api/v1/admin/transactions/pause?pipeline=" + PIPELINE + "&limit=10000");
    fig("pauseAnswer", paused.encode(), "pause", "matched = paused = " + n);
    Map<String, Pos> atPause = states.read(ids);
    List<String> running = PauseStates.where(atPause, p -> p.state().equals("processing"));
    fig("runningAtPause", running.size(), "pause", "the cap; each finishes its step, then parks");
    int released = steps.release();
    await("the running ones to finish their step and park", 60_000, () -> {
      Map<String, Pos> s = states.read(ids);
      return s != null && s.values().stream().noneMatch(p -> p.state().equals("processing"));
    });
    Map<String, Pos> parked = states.read(ids);
    Map<String, Pos> baseline = new HashMap<>(atPause);
    running.forEach(id -> baseline.put(id, parked.get(id)));
    fig("parkedAfterStep", running.stream().filter(id -> parked.get(id).step().equals("1")
        && parked.get(id).state().equals("queued") && parked.get(id).paused()).count(), "pause",
        "runningAtPause (at step 1, queued, paused)");
    fig("heldStepsAnsweredAfterPause", released, "pause", "runningAtPause (their replies, held until now)");

    // 3. the hold: nothing moves, no slot is held, no step runs
    long execHold = steps.total();
    int maxMoved = 0;
    long maxSlots = 0;
    int minPaused = n;
    for (int s = 1; s <= hold; s++) {
      Procs.sleep(1000);
      Map<String, Pos> now = states.read(ids);
      long slots = states.slots();
      if (now == null || slots < 0) {
        System.err.println("bench/pause: hold " + s + " s: Redis did not answer in time");
        continue;
      }
      int moved = moved(baseline, now);
      int stillPaused = (int) now.values().stream().filter(Pos::paused).count();
      long due1 = now.values().stream().filter(Pos::fellDue).count();
      maxMoved = Math.max(maxMoved, moved);
      maxSlots = Math.max(maxSlots, slots);
      minPaused = Math.min(minPaused, stillPaused);
      System.err.printf("bench/pause: hold %3d s: moved %d, slots %d, executions %d, paused %d, timers due %d%n", s,
          moved, slots, steps.total() - execHold, stillPaused, due1);
    }
    fig("holdSeconds", hold, "hold", "");
    fig("maxMoved", maxMoved, "hold", "0");
    fig("maxSlots", maxSlots, "hold", "0");
    fig("executionsInHold", steps.total() - execHold, "hold", "0");
    fig("minPausedInHold", minPaused, "hold", Integer.toString(n));
    fig("timersFellDueInHold", states.read(ids).values().stream().filter(Pos::fellDue).count(), "hold",
        "the sleepers and retriers (due after " + due + " s)");
    fig("parkedOffQueueInHold", states.read(ids).values().stream().filter(Pos::offQueue).count(), "hold",
        "the queued ones dequeue met, and the parked running ones");

    // 4. kill -9 of node1, then Redis killed and started again on its AOF
    nodes.get(1).kill();
    redis.kill();
    redis.start();
    await("node0 ready again", 60_000, () -> driver.call(api, HttpMethod.GET, "/health/ready", null, 2000).await()
        .status() == 200);
    Procs.sleep(10_000); // past heartbeat.ttl: the reaper has judged node1 dead and taken back what it held
    Map<String, Pos> after = states.read(ids);
    fig("pausedAfterRestart", after.values().stream().filter(Pos::paused).count(), "kill -9 + Redis restart",
        Integer.toString(n));
    fig("movedAfterRestart", moved(baseline, after), "kill -9 + Redis restart", "0");
    fig("slotsAfterRestart", states.slots(), "kill -9 + Redis restart", "0");

    // 5. one bulk resume; every one finishes, and no step ran twice
    long execResume = steps.total();
    JsonObject resumed = call(driver, api, "/api/v1/admin/transactions/resume?pipeline=" + PIPELINE + "&limit=10000");
    fig("resumeAnswer", resumed.encode(), "resume", "matched = resumed = " + n);
    long t0 = System.nanoTime();
    boolean done = await("all to finish", (due + 120) * 1000L, () -> {
      Map<String, Pos> s = states.read(ids);
      return s != null && s.values().stream().allMatch(p -> p.state().equals("complete"));
    });
    fig("secondsToFinish", Math.round((System.nanoTime() - t0) / 1e7) / 100.0, "resume", "bounded, " + (due + 120));
    Map<String, Pos> end = states.read(ids);
    long success = end.values().stream().filter(p -> "success".equals(p.status())).count();
    fig("success", success, "resume", Integer.toString(n));
    fig("executionsAfterResume", steps.total() - execResume, "resume", "");
    fig("lastStepExecutions", steps.ofStep(2), "resume", Integer.toString(n));
    fig("duplicateExecutions", steps.duplicates(), "resume", "0 (per txId, step and stepAttempt)");
    fig("httpRetries", startRetries + callRetries, "all", "0 on a quiet machine (a call without an answer, sent again)");
    return done && success == n && maxMoved == 0 && maxSlots == 0 && steps.duplicates() == 0;
  }

  /** Transactions whose step, stepAttempt, attempt or processingState differs from the baseline. */
  private static int moved(Map<String, Pos> baseline, Map<String, Pos> now) {
    int moved = 0;
    for (Map.Entry<String, Pos> e : baseline.entrySet()) {
      if (!e.getValue().sameAs(now.get(e.getKey()))) {
        moved++;
      }
    }
    return moved;
  }

  /** Step 0: the driver's step (retry: fails once, then the backoff; run: held); 1: a delay; 2: the driver's again. */
  private static String pipeline(int cap, int due) {
    String step = "{\"type\":\"eventbus\",\"params\":{\"address\":\"" + PauseSteps.ADDRESS + "\"},\"timeout\":\"10m\"";
    return "{\"name\":\"" + PIPELINE + "\",\"nodeGroup\":\"master\",\"transactionType\":true,\"maxConcurrency\":" + cap
        + ",\"steps\":[" + step + ",\"retry\":{\"maxAttempts\":3,\"initialInterval\":\"" + due + "s\",\"jitter\":false}},"
        + "{\"type\":\"util/delay\",\"params\":{\"duration\":\"" + due + "s\"}}," + step + "}]}";
  }

  /**
   * Starts count transactions of the kind, 50 requests at a time; answers their txIds. A start that got no answer
   * (a connection timed out on a loaded machine) is sent again with the same externalId: a 409 names the one
   * taken the first time.
   */
  private List<String> start(Driver driver, int port, String kind, int count) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < count; i += 50) {
      List<Integer> batch = new ArrayList<>();
      for (int j = i; j < Math.min(count, i + 50); j++) {
        batch.add(j);
      }
      for (int tries = 1; !batch.isEmpty(); tries++) {
        Map<Integer, Future<Driver.Reply>> sent = new LinkedHashMap<>();
        for (int j : batch) {
          sent.put(j, driver.call(port, HttpMethod.POST, "/api/v1/transactions", new JsonObject().put("type", PIPELINE)
              .put("externalId", "pb-" + kind + "-" + j).put("input", new JsonObject().put("kind", kind).put("i", j)),
              10_000));
        }
        batch = new ArrayList<>();
        for (Map.Entry<Integer, Future<Driver.Reply>> e : sent.entrySet()) {
          Driver.Reply r = e.getValue().await();
          if (r.status() == 202 || (r.status() == 409 && tries > 1 && r.json().getString("txId") != null)) {
            ids.add(r.json().getString("txId"));
          } else if (r.status() == 0 && tries < 10) {
            batch.add(e.getKey());
            startRetries++;
          } else {
            throw new IllegalStateException("a start answered " + r.status() + ": " + r.body());
          }
        }
      }
    }
    return ids;
  }

  /** A POST of an admin call (a bulk pause or resume: both idempotent), sent again while no answer comes. */
  private JsonObject call(Driver driver, int port, String uri) {
    for (int tries = 1; ; tries++) {
      Driver.Reply r = driver.call(port, HttpMethod.POST, uri, null, 120_000).await();
      if (r.status() == 0 && tries < 5) {
        callRetries++;
        continue;
      }
      if (r.status() != 200) {
        throw new IllegalStateException(uri + " answered " + r.status() + ": " + r.body());
      }
      return r.json();
    }
  }

  /** Polls the condition every 250 ms until it holds or the bound passes; false (and a line) when it did not. */
  private static boolean await(String what, long boundMs, BooleanSupplier cond) {
    long deadline = System.nanoTime() + boundMs * 1_000_000;
    while (!cond.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        System.err.println("bench/pause: gave up waiting for " + what + " after " + boundMs + " ms");
        return false;
      }
      Procs.sleep(250);
    }
    return true;
  }
}
