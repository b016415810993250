package io.conveyor.bench;

import io.conveyor.Node;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigLoader;
import io.conveyor.pipeline.StepRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Webhook delivery: one node (dequeue + webhooks) runs transactions that each carry a webhook to a receiver
 * in this process (its own Vert.x, answering 200 at once). Reports deliveries per second and the time from
 * each transaction's completion (its completed time) to the arrival of its webhook. One JSON line on
 * stdout; see bench/README.md.
 */
public final class WebhookBench {
  private WebhookBench() {
  }

  static final String USAGE = "usage: bench/webhooks [--transactions N] [--rate R] [--warmup N] [--redis URL]";

  public static void main(String[] args) throws Exception {
    PrintStream out = System.out;
    System.setOut(System.err);
    int transactions = 20_000;
    double rate = 0;
    int warmup = 0;
    String redis = "redis://127.0.0.1:6379";
    for (int i = 0; i < args.length; i += 2) {
      if (i + 1 >= args.length) {
        fail(args[i] + " needs a value (" + USAGE + ")");
      }
      switch (args[i]) {
        case "--transactions" -> transactions = Integer.parseInt(args[i + 1]);
        case "--rate" -> rate = Double.parseDouble(args[i + 1]);
        case "--warmup" -> warmup = Integer.parseInt(args[i + 1]);
        case "--redis" -> redis = args[i + 1];
        default -> fail("unknown option " + args[i] + " (" + USAGE + ")");
      }
    }
    byte[] key = new byte[32];
    ThreadLocalRandom.current().nextBytes(key);
    String secret = "whsec_" + Base64.getEncoder().encodeToString(key);
    Map<String, String> env = new HashMap<>();
    env.put("CONVEYOR_REDIS_URL", redis);
    env.put("CONVEYOR_REDIS_PREFIX", "bench-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()) + ":");
    env.put("CONVEYOR_REDIS_EMBEDDED", "never");
    env.put("CONVEYOR_CLUSTER_ENABLED", "false");
    env.put("CONVEYOR_NODE_ROLES", "dequeue,webhooks");
    env.put("CONVEYOR_WEBHOOKS_SECRET", secret);
    env.put("CONVEYOR_WEBHOOKS_ALLOW_HOSTS", "127.0.0.1");
    env.put("CONVEYOR_ARCHIVE_URL", "h2:target/bench-webhooks/archive");
    Path shipped = Path.of("conf/config.json");
    Config config = ConfigLoader.load(Files.isRegularFile(shipped) ? shipped : null, env);

    Vertx receiverVertx = Vertx.vertx();
    Map<String, Long> arrived = new ConcurrentHashMap<>();
    Map<String, Long> completedAt = new ConcurrentHashMap<>();
    HttpServer receiver = receiverVertx.createHttpServer().requestHandler(req -> req.body().onSuccess(b -> {
      long now = System.currentTimeMillis();
      JsonObject body = b.toJsonObject();
      String txId = body.getString("txId");
      arrived.putIfAbsent(txId, now);
      completedAt.putIfAbsent(txId, Instant.parse(body.getString("completed")).toEpochMilli());
      req.response().setStatusCode(200).end();
    })).listen(0, "127.0.0.1").await();
    String url = "http://127.0.0.1:" + receiver.actualPort() + "/hook";

    Node node = Node.start(config, Clock.systemUTC(), StepRegistry.withBuiltIns()).await(2, TimeUnit.MINUTES);
    BenchClient client = new BenchClient(node).webhook(url);
    try {
      node.vertx().deployVerticle(client).await(30, TimeUnit.SECONDS);
      if (warmup > 0) {
        // the same load first, unmeasured, so the measured one meets compiled code and open connections
        client.run("warm-up", new BenchOptions(java.util.List.of(redis), "standalone", 0, warmup, "noop", rate, 200, 2000, 0, false), true).await();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (arrived.size() < warmup && System.nanoTime() < until) {
          Thread.sleep(50);
        }
        System.err.printf("bench/webhooks: warm-up: %d delivered%n", arrived.size());
        Thread.sleep(1000);
        arrived.clear();
        completedAt.clear();
      }
      BenchOptions load = new BenchOptions(java.util.List.of(redis), "standalone", 0, transactions, "noop", rate, 200, 2000, 0, false);
      Result ran = client.run("webhooks", load, true).await();
      System.err.println("bench/webhooks: ran " + ran.line());
      long giveUp = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
      int last = -1;
      while (arrived.size() < transactions && System.nanoTime() < giveUp) {
        Thread.sleep(100);
        if (arrived.size() / 5000 != last / 5000) {
          last = arrived.size();
          System.err.printf("bench/webhooks: %d delivered%n", last);
        }
      }
      long[] latency = arrived.entrySet().stream()
          .mapToLong(e -> e.getValue() - completedAt.get(e.getKey())).sorted().toArray();
      long first = completedAt.values().stream().mapToLong(Long::longValue).min().orElse(0);
      long end = arrived.values().stream().mapToLong(Long::longValue).max().orElse(0);
      double seconds = (end - first) / 1000.0;
      out.printf(Locale.ROOT, "{\"transactions\":%d,\"rate\":%.0f,\"delivered\":%d,\"seconds\":%.3f,"
              + "\"deliveredPerSecond\":%.1f,\"p50Ms\":%d,\"p95Ms\":%d,\"p99Ms\":%d,\"maxMs\":%d}%n", transactions,
          rate, arrived.size(), seconds, arrived.size() / seconds, pct(latency, 50), pct(latency, 95),
          pct(latency, 99), latency.length == 0 ? 0 : latency[latency.length - 1]);
      out.flush();
    } finally {
      client.deleteKeys().await(60, TimeUnit.SECONDS);
      node.stop().await(30, TimeUnit.SECONDS);
      receiverVertx.close().await();
    }
    System.exit(0);
  }

  private static long pct(long[] sorted, int p) {
    return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) Math.ceil(sorted.length * p / 100.0) - 1)];
  }

  private static void fail(String message) {
    System.err.println("bench/webhooks: " + message);
    System.exit(2);
  }
}
