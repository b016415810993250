package io.conveyor.bench;

import java.net.URI;
import java.util.List;

/**
 * What the benchmark was asked to do. rate is 0 when transactions start as fast as possible (then at
 * most concurrency starts await their reply); warmup transactions run first, the same way, and
 * are not measured; queueOnly starts them on a node without the dequeue role.
 */
record BenchOptions(List<String> redis, String redisMode, int partitions, int transactions, String pipeline,
                    double rate, int workers, int concurrency, int warmup, boolean queueOnly) {

  static final String USAGE = "usage: bench/run [--redis URL[,URL…]] [--redis-mode standalone|cluster|sentinel]"
      + " [--partitions P] [--transactions N] [--pipeline NAME] [--rate R] [--workers W] [--concurrency C]"
      + " [--warmup N] [--queue-only]";

  /** Reads the command line; throws IllegalArgumentException with a one-line message naming the option. */
  static BenchOptions parse(String[] args) {
    List<String> redis = List.of("redis://127.0.0.1:6379");
    String redisMode = "standalone";
    int partitions = 0;
    String pipeline = "noop";
    int transactions = 20_000;
    int workers = 500;
    int concurrency = 2000;
    double rate = 0;
    int warmup = 0;
    boolean queueOnly = false;
    for (int i = 0; i < args.length; i++) {
      String name = args[i];
      if (name.equals("--queue-only")) {
        queueOnly = true;
        continue;
      }
      if (i + 1 == args.length) {
        throw new IllegalArgumentException(known(name) + " needs a value (" + USAGE + ")");
      }
      String v = args[++i];
      switch (known(name)) {
        case "--redis" -> redis = java.util.Arrays.stream(v.split(",")).map(String::trim)
            .filter(u -> !u.isEmpty()).map(BenchOptions::url).toList();
        case "--redis-mode" -> redisMode = mode(v);
        case "--partitions" -> partitions = whole(name, v, 1, 1024);
        case "--transactions" -> transactions = whole(name, v, 1, 1_000_000_000);
        case "--pipeline" -> pipeline = pipelineName(v);
        case "--rate" -> rate = rate(v);
        case "--workers" -> workers = whole(name, v, 1, 100_000);
        case "--warmup" -> warmup = whole(name, v, 0, 1_000_000_000);
        default -> concurrency = whole(name, v, 1, 1_000_000);
      }
    }
    if (redis.isEmpty()) {
      throw new IllegalArgumentException("--redis: expected one URL or more, comma-separated");
    }
    return new BenchOptions(redis, redisMode, partitions, transactions, pipeline, rate, workers, concurrency, warmup,
        queueOnly);
  }

  private static String mode(String v) {
    if (v.matches("standalone|cluster|sentinel")) {
      return v;
    }
    throw new IllegalArgumentException("--redis-mode: expected standalone, cluster or sentinel, got '" + v + "'");
  }

  /** The warm-up run: the same run with warmup transactions, so the same code paths get compiled. */
  BenchOptions warmupRun() {
    return new BenchOptions(redis, redisMode, partitions, warmup, pipeline, rate, workers, concurrency, 0, queueOnly);
  }

  private static String known(String name) {
    if (name.matches("--(redis|redis-mode|partitions|transactions|pipeline|rate|workers|concurrency|warmup)")) {
      return name;
    }
    throw new IllegalArgumentException("unknown option " + name + " (" + USAGE + ")");
  }

  private static int whole(String name, String v, int min, int max) {
    try {
      int n = Integer.parseInt(v.trim());
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(name + ": expected a whole number from " + min + " to " + max + ", got '" + v
        + "'");
  }

  private static double rate(String v) {
    try {
      double r = Double.parseDouble(v.trim());
      if (r > 0 && r <= 10_000_000) {
        return r;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException("--rate: expected transactions per second above 0, got '" + v + "'");
  }

  private static String url(String v) {
    try {
      URI uri = URI.create(v);
      if (("redis".equals(uri.getScheme()) || "rediss".equals(uri.getScheme())) && uri.getHost() != null) {
        return v;
      }
    } catch (IllegalArgumentException e) {
      // reported below
    }
    throw new IllegalArgumentException("--redis: expected a URL like redis://127.0.0.1:6379, got '" + v + "'");
  }

  private static String pipelineName(String v) {
    if (v.matches("[A-Za-z0-9][A-Za-z0-9_./@:-]{0,127}")) {
      return v;
    }
    throw new IllegalArgumentException("--pipeline: expected a pipeline name, got '" + v + "'");
  }
}
