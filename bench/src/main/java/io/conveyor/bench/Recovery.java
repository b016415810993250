package io.conveyor.bench;

import io.conveyor.ClientRoot;
import io.conveyor.domain.Transactions;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigLoader;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The recovery scenario: two node processes from the fat jar with the default settings, work in flight on
 * both, then kill -9 one of them. Prints one JSON line: how much the dead node was running, the seconds
 * from the kill until all of it was running again elsewhere (or done), and how many transactions were
 * lost. Usage: Recovery [--redis URL] [--transactions N]
 */
public final class Recovery {
  private Recovery() {
  }

  public static void main(String[] args) throws Exception {
    String redis = args.length > 1 && args[0].equals("--redis") ? args[1] : "redis://127.0.0.1:6379";
    int n = args.length > 3 && args[2].equals("--transactions") ? Integer.parseInt(args[3]) : 2000;
    String prefix = "recovery-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()) + ":";
    Path pipelines = Files.createTempDirectory("pipelines");
    Files.writeString(pipelines.resolve("slow.json"), "{\"name\":\"slow\",\"nodeGroup\":\"master\","
        + "\"transactionType\":true,\"steps\":[{\"type\":\"util/delay\",\"params\":{\"duration\":\"300ms\"}},"
        + "{\"type\":\"util/delay\",\"params\":{\"duration\":\"300ms\"}}]}");
    Map<String, String> env = Map.of("CONVEYOR_REDIS_URL", redis, "CONVEYOR_REDIS_PREFIX", prefix,
        "CONVEYOR_CLUSTER_NAME", prefix.replace(":", ""), "CONVEYOR_PIPELINES_DIR", pipelines.toString());
    List<Process> nodes = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    Vertx vertx = Vertx.vertx();
    Redis client = Redis.createClient(vertx, redis);
    try {
      for (int i = 0; i < 2; i++) {
        ProcessBuilder pb = new ProcessBuilder("java", "-Xmx256m", "-jar", "target/conveyor.jar").redirectErrorStream(true);
        pb.environment().putAll(env);
        pb.environment().put("CONVEYOR_HTTP_PORT", Integer.toString(18100 + i));
        Process p = pb.start();
        nodes.add(p);
        ids.add(awaitStarted(p));
      }
      Config config = ConfigLoader.load(null, env);
      Transactions tx = ClientRoot.transactions(vertx, config);
      List<Future<?>> starts = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        starts.add(tx.start(new JsonObject().put("type", "slow").put("owner", "bench").put("input", new JsonObject())));
      }
      Future.all(starts).await();
      String victim = ids.get(1);
      String inflight = prefix + "inflightZ:" + victim;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (cmd(client, "ZCARD", inflight).toInteger() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      nodes.get(1).destroyForcibly();
      long killed = System.nanoTime();
      List<String> running = new ArrayList<>();
      cmd(client, "ZRANGE", inflight, "0", "-1").forEach(r -> running.add(r.toString()));
      while (!running.isEmpty() && System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(60)) {
        running.removeIf(id -> movedOn(client, prefix, id, victim));
        Thread.sleep(5);
      }
      double seconds = (System.nanoTime() - killed) / 1e9;
      int inFlight = cmd(client, "ZCARD", prefix + "processingZ").toInteger();
      long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (cmd(client, "ZCARD", prefix + "toArchiveZ").toInteger() < n && System.nanoTime() < waitUntil) {
        Thread.sleep(20);
      }
      int done = cmd(client, "ZCARD", prefix + "toArchiveZ").toInteger();
      System.out.printf("{\"transactions\":%d,\"notYetRecovered\":%d,\"secondsToRecover\":%.3f,\"lost\":%d}%n",
          n, running.size(), seconds, n - done);
      System.err.println("recovery: in processing right after recovery: " + inFlight);
    } finally {
      nodes.forEach(Process::destroyForcibly);
      List<String> keys = new ArrayList<>();
      cmd(client, "KEYS", prefix + "*").forEach(r -> keys.add(r.toString()));
      for (String k : keys) {
        cmd(client, "DEL", k);
      }
      vertx.close().await();
    }
  }

  /** Running again elsewhere, or finished: its state no longer names the dead node as its runner. */
  private static boolean movedOn(Redis client, String prefix, String id, String victim) {
    Response s = cmd(client, "HMGET", prefix + "stateH:" + id, "processingState", "node");
    String state = String.valueOf(s.get(0));
    return state.equals("complete") || (state.equals("processing") && !victim.equals(String.valueOf(s.get(1))));
  }

  private static String awaitStarted(Process p) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream()));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.contains(" started: group")) {
        String id = line.replaceAll(".*node (node-\\w+) started.*", "$1");
        CompletableFuture.runAsync(() -> in.lines().forEach(l -> { })); // keep draining its output
        return id;
      }
    }
    throw new IOException("a node exited before it started");
  }

  private static Response cmd(Redis client, String... args) {
    Request r = Request.cmd(Command.create(args[0]));
    for (int i = 1; i < args.length; i++) {
      r.arg(args[i]);
    }
    return client.send(r).await();
  }
}
