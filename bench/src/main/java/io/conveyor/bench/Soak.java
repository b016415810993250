package io.conveyor.bench;

import io.conveyor.Node;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The soak (bench/soak): one node with every role of the shipped config (the archive too), a steady rate of
 * transactions for a long run, a line per interval (SoakReport), then the archive's drain and the run's keys left
 * in Redis by family. One JSON line on stdout; see bench/README.md ("Soak").
 */
public final class Soak {
  private Soak() {
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = System.out;
    System.setOut(System.err);
    long everyMs = 60_000;
    List<String> rest = new ArrayList<>();
    BenchOptions options;
    Config config;
    try {
      for (int i = 0; i < args.length; i++) {
        if (args[i].equals("--report-every")) {
          if (i + 1 == args.length || !args[i + 1].matches("[1-9][0-9]{0,5}")) {
            throw new IllegalArgumentException("--report-every: expected whole seconds from 1 to 999999");
          }
          everyMs = Long.parseLong(args[++i]) * 1000;
        } else {
          rest.add(args[i]);
        }
      }
      options = BenchOptions.parse(rest.toArray(String[]::new));
      if (options.rate() <= 0 || options.queueOnly()) {
        throw new IllegalArgumentException("a soak runs at a steady --rate R, with the node running its work");
      }
      config = Bench.config(options, null);
    } catch (IllegalArgumentException | ConfigException e) {
      System.err.println("bench: " + e.getMessage() + " (bench/soak --rate R [--transactions N] [--report-every S]"
          + " and bench/run's other options)");
      System.exit(2);
      return;
    }
    System.exit(run(options, config, everyMs, out));
  }

  private static int run(BenchOptions options, Config config, long everyMs, PrintStream out) {
    Node node = Bench.startNode(config);
    if (node == null) {
      return 1;
    }
    BenchClient client = new BenchClient(node);
    try (HeapWatch heap = new HeapWatch()) {
      Bench.deploy(client, node, options);
      SoakReport report = new SoakReport(client, heap, everyMs);
      Result result = client.run("soak", options, true, report).await();
      // the archive drains what is left: archive.delay after the last completion, and its rounds
      long bound = System.nanoTime() + config.archive().delay().toNanos() + TimeUnit.MINUTES.toNanos(5);
      long left = client.toArchive().await();
      while (left > 0 && System.nanoTime() < bound) {
        System.err.printf("bench: soak: %d completed transactions wait for the archive%n", left);
        Thread.sleep(5_000);
        left = client.toArchive().await();
      }
      Map<String, Long> keys = client.census().await(5, TimeUnit.MINUTES);
      System.err.println("bench: soak: keys left under the run's prefix, by family: " + keys);
      // counts kept per owner or group go at 0: what is left of them once nothing runs is a count that leaked
      for (String counting : List.of("qFairH", "qRunH", "liveOwnersH")) {
        if (keys.containsKey(counting)) {
          System.err.println("bench: soak: " + counting + " holds " + client.hashes(counting).await());
        }
      }
      out.println(new JsonObject(result.line()).put("reportEveryS", everyMs / 1000).put("intervals", report.rows())
          .put("toArchiveAtEnd", left).put("keysLeft", new JsonObject(new java.util.TreeMap<>(keys))).encode());
      out.flush();
      return result.finished() == options.transactions() && left == 0 ? 0 : 1;
    } catch (Throwable e) {
      System.err.println("bench: the soak failed: " + e);
      return 1;
    } finally {
      Bench.cleanUp(node, client);
    }
  }
}
