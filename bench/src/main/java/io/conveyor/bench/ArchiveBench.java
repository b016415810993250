package io.conveyor.bench;

import io.conveyor.Node;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigLoader;
import io.conveyor.pipeline.StepRegistry;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Archive throughput: a node runs N transactions with no archive role, so all N wait in toArchiveZ; then a
 * node with only the archive role starts, and the bench times how fast it moves them to PostgreSQL and
 * cleans Redis. Prints one JSON line on stdout; progress goes to stderr. See bench/README.md.
 */
public final class ArchiveBench {
  private ArchiveBench() {
  }

  static final String USAGE = "usage: bench/archive [--transactions N] [--batch-size B] [--pg URL] [--redis URL]"
      + " [--sustain SECONDS --rate R --delay SECONDS]";

  public static void main(String[] args) throws Exception {
    PrintStream out = System.out;
    System.setOut(System.err);
    int transactions = 100_000;
    int batchSize = 1000;
    String pg = "postgresql://postgres@127.0.0.1:5432/test";
    String redis = "redis://127.0.0.1:6379";
    int sustain = 0;
    int rate = 5000;
    int delay = 5;
    for (int i = 0; i < args.length; i += 2) {
      if (i + 1 >= args.length) {
        fail(args[i] + " needs a value (" + USAGE + ")");
      }
      switch (args[i]) {
        case "--transactions" -> transactions = Integer.parseInt(args[i + 1]);
        case "--batch-size" -> batchSize = Integer.parseInt(args[i + 1]);
        case "--pg" -> pg = args[i + 1];
        case "--redis" -> redis = args[i + 1];
        case "--sustain" -> sustain = Integer.parseInt(args[i + 1]);
        case "--rate" -> rate = Integer.parseInt(args[i + 1]);
        case "--delay" -> delay = Integer.parseInt(args[i + 1]);
        default -> fail("unknown option " + args[i] + " (" + USAGE + ")");
      }
    }
    String table = "bench_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    Map<String, String> env = new HashMap<>();
    env.put("CONVEYOR_REDIS_URL", redis);
    env.put("CONVEYOR_REDIS_PREFIX", "bench-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()) + ":");
    env.put("CONVEYOR_REDIS_EMBEDDED", "never");
    env.put("CONVEYOR_CLUSTER_ENABLED", "false");
    env.put("CONVEYOR_ARCHIVE_URL", pg);
    env.put("CONVEYOR_ARCHIVE_TABLE", table);
    env.put("CONVEYOR_ARCHIVE_DELAY", "0s");
    env.put("CONVEYOR_ARCHIVE_BATCH_SIZE", Integer.toString(batchSize));
    env.put("CONVEYOR_NODE_ROLES", "dequeue");
    Path shipped = Path.of("conf/config.json");
    Config runner = ConfigLoader.load(Files.isRegularFile(shipped) ? shipped : null, env);
    env.put("CONVEYOR_NODE_ROLES", "archive");
    Config archiver = ConfigLoader.load(Files.isRegularFile(shipped) ? shipped : null, env);

    if (sustain > 0) {
      env.put("CONVEYOR_NODE_ROLES", "dequeue,archive");
      env.put("CONVEYOR_ARCHIVE_DELAY", delay + "s");
      sustained(ConfigLoader.load(Files.isRegularFile(shipped) ? shipped : null, env), redis, pg, table, sustain, rate,
          delay, out);
      System.exit(0);
    }
    Node node = Node.start(runner, Clock.systemUTC(), StepRegistry.withBuiltIns()).await(2, TimeUnit.MINUTES);
    BenchClient client = new BenchClient(node);
    Node archive = null;
    try {
      node.vertx().deployVerticle(client).await(30, TimeUnit.SECONDS);
      BenchOptions load = new BenchOptions(java.util.List.of(redis), "standalone", 0, transactions, "noop", 0, 200, 2000, 0, false);
      Result ran = client.run("load", load, true).await();
      System.err.println("bench/archive: ran " + ran.line());
      long queued = client.zcard(node.redis().keys().toArchiveZ(0)).await();
      long memoryBefore = client.usedMemory().await();
      System.err.printf("bench/archive: %d transactions wait in toArchiveZ; Redis used_memory %d bytes%n", queued,
          memoryBefore);

      archive = Node.start(archiver, Clock.systemUTC(), StepRegistry.withBuiltIns()).await(2, TimeUnit.MINUTES);
      long t0 = System.nanoTime();
      long left0 = client.zcard(node.redis().keys().toArchiveZ(0)).await();
      long left = left0;
      long lastReport = t0;
      while (left > 0) {
        Thread.sleep(20);
        left = client.zcard(node.redis().keys().toArchiveZ(0)).await();
        if (System.nanoTime() - lastReport > 1_000_000_000L) {
          lastReport = System.nanoTime();
          System.err.printf("bench/archive: %d left%n", left);
        }
        if (System.nanoTime() - t0 > TimeUnit.MINUTES.toNanos(10)) {
          fail("gave up after 10 minutes with " + left + " left");
        }
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      long memoryAfter = client.usedMemory().await();
      long rows = rows(pg, table);
      out.printf(Locale.ROOT, "{\"transactions\":%d,\"batchSize\":%d,\"archived\":%d,\"rowsInPostgres\":%d,"
              + "\"seconds\":%.3f,\"archivedPerSecond\":%.1f,\"redisBytesBefore\":%d,\"redisBytesAfter\":%d}%n",
          transactions, batchSize, left0, rows, seconds, left0 / seconds, memoryBefore, memoryAfter);
      out.flush();
    } finally {
      if (archive != null) {
        archive.stop().await(30, TimeUnit.SECONDS);
      }
      client.deleteKeys().await(60, TimeUnit.SECONDS);
      node.stop().await(30, TimeUnit.SECONDS);
      query(pg, "DROP TABLE IF EXISTS " + table + ", " + table + "_schema_history, " + table + "_schema");
    }
    System.exit(0);
  }

  /**
   * One node runs and archives at once, at a steady rate: once the archive delay has passed, Redis should
   * hold only the last delay's worth of transactions, and its memory should stop growing.
   */
  private static void sustained(Config config, String redis, String pg, String table, int seconds, int rate, int delay,
                                PrintStream out) throws Exception {
    Node node = Node.start(config, Clock.systemUTC(), StepRegistry.withBuiltIns()).await(2, TimeUnit.MINUTES);
    BenchClient client = new BenchClient(node);
    try {
      node.vertx().deployVerticle(client).await(30, TimeUnit.SECONDS);
      BenchOptions load = new BenchOptions(java.util.List.of(redis), "standalone", 0, rate * seconds, "noop", rate, 200, 2000, 0, false);
      long t0 = System.nanoTime();
      io.vertx.core.Future<Result> run = client.run("sustained", load, true);
      java.util.List<long[]> samples = new java.util.ArrayList<>();
      while (!run.isComplete()) {
        Thread.sleep(1000);
        long t = (System.nanoTime() - t0) / 1_000_000_000L;
        long mem = client.usedMemory().await();
        long due = client.zcard(node.redis().keys().toArchiveZ(0)).await();
        samples.add(new long[] {t, mem, due});
        System.err.printf("bench/archive: t=%ds used_memory=%d toArchiveZ=%d%n", t, mem, due);
      }
      System.err.println("bench/archive: ran " + run.result().line());
      long[] settled = samples.stream().filter(x -> x[0] >= delay + 2).findFirst().orElse(samples.get(0));
      long[] last = samples.get(samples.size() - 1);
      long max = samples.stream().filter(x -> x[0] >= settled[0]).mapToLong(x -> x[1]).max().orElse(0);
      out.printf(Locale.ROOT, "{\"sustainSeconds\":%d,\"rate\":%d,\"archiveDelaySeconds\":%d,\"tps\":%.1f,"
              + "\"redisBytesAt%ds\":%d,\"redisBytesAtEnd\":%d,\"redisBytesMaxAfter%ds\":%d,\"toArchiveZAtEnd\":%d,"
              + "\"rowsInPostgres\":%d}%n", seconds, rate, delay, run.result().tps(), settled[0], settled[1], last[1],
          settled[0], max, last[2], rows(pg, table));
      out.flush();
    } finally {
      client.deleteKeys().await(60, TimeUnit.SECONDS);
      node.stop().await(30, TimeUnit.SECONDS);
      query(pg, "DROP TABLE IF EXISTS " + table + ", " + table + "_schema_history, " + table + "_schema");
    }
  }

  private static long rows(String pg, String table) {
    return ((Number) query(pg, "SELECT count(*) FROM " + table)).longValue();
  }

  private static Object query(String pg, String sql) {
    Vertx vertx = Vertx.vertx();
    try {
      Pool pool = PgBuilder.pool().connectingTo(PgConnectOptions.fromUri(pg)).using(vertx).build();
      var rows = pool.query(sql).execute().await();
      pool.close().await();
      return rows.size() == 0 ? null : rows.iterator().next().getValue(0);
    } finally {
      vertx.close().await();
    }
  }

  private static void fail(String message) {
    System.err.println("bench/archive: " + message);
    System.exit(2);
  }
}
