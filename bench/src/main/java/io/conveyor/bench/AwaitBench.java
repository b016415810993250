package io.conveyor.bench;

import io.conveyor.Node;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigLoader;
import io.conveyor.domain.Events;
import io.conveyor.domain.Transactions;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.pipeline.StepRegistry;
import io.conveyor.pipeline.StepResult;
import io.conveyor.pipeline.StepType;
import io.conveyor.pipeline.Step;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.Request;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * flow/await at scale: N transactions wait, each for its own business key, on three nodes in one JVM sharing one
 * Redis (or a Redis Cluster); then N events are sent, one per key, at most W at once, through the same Events
 * service a node's HTTP route uses. A step after the await counts its runs per transaction, so "resumed exactly
 * once" is counted, not assumed; event-to-resume is from just before an event's send to its step's run. Prints
 * one JSON line on stdout; progress goes to stderr. See bench/README.md.
 */
public final class AwaitBench {
  static final String USAGE = "usage: bench/await [--transactions N] [--window W] [--nodes K] [--redis URL[,URL…]] "
      + "[--partitions P]";
  private static final Map<String, AtomicInteger> RUNS = new ConcurrentHashMap<>();
  private static final Map<String, Long> RESUMED = new ConcurrentHashMap<>();

  private AwaitBench() {
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = System.out;
    System.setOut(System.err);
    int n = 10_000;
    int window = 200;
    int nodes = 3;
    String redis = "redis://127.0.0.1:6379";
    int partitions = 0;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--transactions" -> n = Integer.parseInt(args[i + 1]);
        case "--window" -> window = Integer.parseInt(args[i + 1]);
        case "--nodes" -> nodes = Integer.parseInt(args[i + 1]);
        case "--redis" -> redis = args[i + 1];
        case "--partitions" -> partitions = Integer.parseInt(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i] + " (" + USAGE + ")");
      }
    }
    Path pipelines = Files.createTempDirectory("await-bench");
    Files.writeString(pipelines.resolve("wait.json"), "{\"name\":\"wait\",\"nodeGroup\":\"master\","
        + "\"transactionType\":true,\"steps\":[{\"type\":\"flow/await\",\"params\":{\"event\":\"bench.go\","
        + "\"key\":\"${input.k}\",\"timeout\":\"1h\"}},{\"type\":\"bench/resumed\"}]}");
    Map<String, String> env = new HashMap<>();
    String prefix = "bench-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()) + ":";
    env.put("CONVEYOR_REDIS_PREFIX", prefix);
    env.put("CONVEYOR_REDIS_EMBEDDED", "never");
    env.put("CONVEYOR_CLUSTER_ENABLED", "false");
    env.put("CONVEYOR_PIPELINES_DIR", pipelines.toString());
    env.put("CONVEYOR_NODE_ROLES", "dequeue,api,reaper");
    env.put("CONVEYOR_HTTP_PORT", "0");
    if (redis.contains(",") || partitions > 0) {
      env.put("CONVEYOR_REDIS_MODE", "cluster");
      env.put("CONVEYOR_REDIS_ENDPOINTS", redis);
      env.put("CONVEYOR_REDIS_PARTITIONS", Integer.toString(Math.max(1, partitions)));
    } else {
      env.put("CONVEYOR_REDIS_URL", redis);
    }
    Config config = ConfigLoader.load(null, env);
    List<Node> running = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      running.add(Node.start(config, Clock.systemUTC(), registry()).await(2, TimeUnit.MINUTES));
    }
    Vertx vertx = Vertx.vertx();
    Node first = running.get(0);
    Transactions tx = new Transactions(first.redis().open(vertx), first.catalog(), config,
        Future.succeededFuture(null), new NodeMetrics(false));
    Events events = Events.on(tx, first.catalog(), config);
    try {
      long t0 = System.nanoTime();
      List<String> txIds = new ArrayList<>();
      for (int i = 0; i < n; i += window) {
        List<Future<String>> batch = new ArrayList<>();
        for (int j = i; j < Math.min(n, i + window); j++) {
          batch.add(tx.start(new JsonObject().put("type", "wait").put("owner", "bench")
              .put("input", new JsonObject().put("k", "k-" + j))).map(s -> s.txId()));
        }
        for (Future<String> f : batch) {
          txIds.add(f.await());
        }
      }
      long sleeping = 0;
      while (sleeping < n) {
        Thread.sleep(200);
        sleeping = 0;
        for (int p : first.redis().keys().all()) {
          sleeping += tx.context().link().send(Request.cmd(Command.ZCARD).arg(first.redis().keys().sleepingZ(p)))
              .await().toLong();
        }
        System.err.printf("bench/await: %,d of %,d waiting%n", sleeping, n);
        if (System.nanoTime() - t0 > TimeUnit.MINUTES.toNanos(10)) {
          throw new IllegalStateException("gave up: only " + sleeping + " waiting after 10 minutes");
        }
      }
      double startSeconds = (System.nanoTime() - t0) / 1e9;
      Map<String, Long> sentAt = new ConcurrentHashMap<>();
      long s0 = System.nanoTime();
      int delivered = 0;
      for (int i = 0; i < n; i += window) {
        List<Future<Events.Sent>> batch = new ArrayList<>();
        for (int j = i; j < Math.min(n, i + window); j++) {
          sentAt.put(txIds.get(j), System.nanoTime());
          batch.add(events.send("bench", new JsonObject().put("name", "bench.go").put("key", "k-" + j)
              .put("id", "go-" + j).put("payload", new JsonObject().put("j", j))));
        }
        for (Future<Events.Sent> f : batch) {
          delivered += f.await().woken().size();
        }
      }
      double sendSeconds = (System.nanoTime() - s0) / 1e9;
      while (RESUMED.size() < n && System.nanoTime() - s0 < TimeUnit.MINUTES.toNanos(5)) {
        Thread.sleep(100);
      }
      long[] lat = txIds.stream().filter(RESUMED::containsKey)
          .mapToLong(id -> (RESUMED.get(id) - sentAt.get(id)) / 1000).sorted().toArray();
      long twice = RUNS.values().stream().filter(c -> c.get() > 1).count();
      out.printf(Locale.ROOT, "{\"transactions\":%d,\"nodes\":%d,\"partitions\":%d,\"startAndWaitSeconds\":%.1f,"
              + "\"eventsSent\":%d,\"sendSeconds\":%.1f,\"eventsPerSecond\":%.0f,\"delivered\":%d,\"resumed\":%d,"
              + "\"resumedTwice\":%d,\"eventToResumeMs\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f}}%n", n, nodes,
          config.redis().partitions(), startSeconds, n, sendSeconds, n / sendSeconds, delivered, RESUMED.size(), twice,
          pct(lat, 0.50), pct(lat, 0.99), lat.length == 0 ? 0 : lat[lat.length - 1] / 1000.0);
      out.flush();
    } finally {
      for (Node node : running) {
        node.stop().await(30, TimeUnit.SECONDS);
      }
      deleteKeys(vertx, config, prefix);
      vertx.close().await();
    }
    System.exit(0);
  }

  private static double pct(long[] sortedMicros, double q) {
    if (sortedMicros.length == 0) {
      return 0;
    }
    return sortedMicros[Math.min(sortedMicros.length - 1, (int) Math.ceil(q * sortedMicros.length) - 1)] / 1000.0;
  }

  /** The built-ins and bench/resumed, which notes when and how often each transaction ran past its await. */
  private static StepRegistry registry() {
    return StepRegistry.withBuiltIns().register(new StepType() {
      @Override
      public String name() {
        return "bench/resumed";
      }

      @Override
      public Step create(JsonObject params) {
        return ctx -> {
          RESUMED.putIfAbsent(ctx.txId(), System.nanoTime());
          RUNS.computeIfAbsent(ctx.txId(), k -> new AtomicInteger()).incrementAndGet();
          return Future.<StepResult>succeededFuture(new StepResult.Success(ctx.input()));
        };
      }
    });
  }

  /** Removes the run's keys (SCAN on each master of a cluster; a standalone Redis is one). */
  private static void deleteKeys(Vertx vertx, Config config, String prefix) {
    for (String url : config.redis().endpoints()) {
      Redis r = Redis.createClient(vertx, url);
      String cursor = "0";
      do {
        var reply = r.send(Request.cmd(Command.SCAN).arg(cursor).arg("MATCH").arg(prefix + "*").arg("COUNT")
            .arg(1000)).await();
        cursor = reply.get(0).toString();
        List<String> keys = new ArrayList<>();
        reply.get(1).forEach(k -> keys.add(k.toString()));
        for (String k : keys) {
          r.send(Request.cmd(Command.DEL).arg(k)).await();
        }
      } while (!cursor.equals("0"));
      r.close();
    }
  }
}
