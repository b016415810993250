package io.conveyor.bench;

import io.conveyor.Node;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.config.ConfigLoader;
import io.conveyor.pipeline.StepRegistry;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark: a node in this JVM, a client on its Vert.x that starts N transactions and learns of their
 * completion from the notify channel, one JSON line on stdout, everything else on stderr. See bench/README.md.
 */
public final class Bench {
  private static final double MB = 1024.0 * 1024.0;

  private Bench() {
  }

  public static void main(String[] args) {
    // logs go to stdout by default; the result line must be alone there, so everything else goes to stderr
    PrintStream out = System.out;
    System.setOut(System.err);
    System.setProperty("vertx.logger-delegate-factory-class-name", "io.vertx.core.logging.SLF4JLogDelegateFactory");
    if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
      System.err.println(BenchOptions.USAGE);
      System.exit(0);
    }
    BenchOptions options;
    Config config;
    try {
      options = BenchOptions.parse(args);
      config = config(options);
    } catch (IllegalArgumentException | ConfigException e) {
      System.err.println("bench: " + e.getMessage());
      System.exit(2);
      return;
    }
    System.exit(run(options, config, out));
  }

  /** The shipped defaults with this run's overrides; other CONVEYOR_* variables still apply for experiments. */
  static Config config(BenchOptions o) {
    return config(o, o.queueOnly() ? "api" : "dequeue");
  }

  /** The same with these node.roles (null: the shipped config's, every role: the soak's archive too). */
  static Config config(BenchOptions o, String roles) {
    Map<String, String> env = new HashMap<>();
    System.getenv().forEach((k, v) -> {
      if (k.startsWith("CONVEYOR_")) {
        env.put(k, v);
      }
    });
    env.put(ConfigLoader.envName("redis.url"), o.redis().get(0));
    env.put(ConfigLoader.envName("redis.mode"), o.redisMode());
    if (!o.redisMode().equals("standalone")) {
      env.put(ConfigLoader.envName("redis.endpoints"), String.join(",", o.redis()));
    }
    if (o.partitions() > 0) {
      env.put(ConfigLoader.envName("redis.partitions"), Integer.toString(o.partitions()));
    }
    env.put(ConfigLoader.envName("redis.prefix"), "bench-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current()
        .nextInt()) + ":");
    env.put(ConfigLoader.envName("redis.embedded"), "never");
    env.put(ConfigLoader.envName("cluster.enabled"), "false");
    // a queue-only node takes starts but runs nothing; roles may not be empty, and api runs no work
    if (roles != null) {
      env.put(ConfigLoader.envName("node.roles"), roles);
    }
    env.put(ConfigLoader.envName("node.workers"), Integer.toString(o.workers()));
    Path shipped = Path.of("conf/config.json");
    return ConfigLoader.load(Files.isRegularFile(shipped) ? shipped : null, env);
  }

  /** A node of this config, in this JVM; null (said on stderr) when it did not start. */
  static Node startNode(Config config) {
    try {
      return Node.start(config, Clock.systemUTC(), StepRegistry.withBuiltIns()).await(2, TimeUnit.MINUTES);
    } catch (Throwable e) {
      System.err.println("bench: the node did not start: " + e.getMessage());
      return null;
    }
  }

  /** The bench's client deployed on the node's Vert.x, once the pipeline it will start is known to the node. */
  static void deploy(BenchClient client, Node node, BenchOptions options) throws java.util.concurrent.TimeoutException {
    node.vertx().deployVerticle(client).await(30, TimeUnit.SECONDS);
    client.checkPipeline(options.pipeline()).await(30, TimeUnit.SECONDS);
  }

  private static int run(BenchOptions options, Config config, PrintStream out) {
    Node node = startNode(config);
    if (node == null) {
      return 1;
    }
    BenchClient client = new BenchClient(node);
    try {
      deploy(client, node, options);
      warmUp(client, options);
      long before = client.usedMemory().await(30, TimeUnit.SECONDS);
      Map<String, RedisChores.Master> mastersBefore = client.masters().await(60, TimeUnit.SECONDS);
      HeapWatch heap = new HeapWatch();
      long cpuBefore = processCpuNanos();
      Map<Long, Long> allocBefore = allocatedBytes();
      Result result = client.run("run", options, !options.queueOnly()).await();
      long cpuNanos = processCpuNanos() - cpuBefore;
      long allocated = allocatedSince(allocBefore);
      heap.close();
      io.vertx.core.json.JsonObject masters = shares(mastersBefore, client.masters().await(60, TimeUnit.SECONDS));
      System.err.println("bench: per master (share of the run's Redis CPU, of its transaction keys, commands): "
          + masters.encode());
      long after = client.usedMemory().await(30, TimeUnit.SECONDS);
      double heapMb = heapUsedAfterGc() / MB;
      double redisPerTx = (after - before) / (double) options.transactions();
      String what = options.queueOnly() ? "queued" : "completed, not yet archived";
      System.err.printf("bench: Redis used_memory grew %d bytes: %s bytes per %s transaction%n", after - before,
          Result.num(redisPerTx), what);
      System.err.printf("bench: JVM heap used after GC: %s MB at the end, at most %s MB after any GC during the run"
          + " (node and bench client together)%n", Result.num(heapMb), Result.num(heap.peakAfterGc() / MB));
      String line = options.queueOnly() ? result.queueLine(heapMb, redisPerTx) : result.line();
      // per transaction: this JVM's CPU (node and bench client together), Redis's CPU and commands, bytes left in
      // Redis (completed, not yet archived), and the heap after GC at the end
      double redisCpu = 0;
      long commands = 0;
      for (String m : masters.fieldNames()) {
        redisCpu += masters.getJsonObject(m).getDouble("cpuSeconds");
        commands += masters.getJsonObject(m).getLong("commands");
      }
      int n = options.transactions();
      io.vertx.core.json.JsonObject perTx = new io.vertx.core.json.JsonObject()
          .put("jvmCpuUs", Math.round(cpuNanos / 1000.0 / n * 10) / 10.0)
          .put("redisCpuUs", Math.round(redisCpu * 1e6 / n * 10) / 10.0)
          .put("redisCommands", Math.round(commands * 100.0 / n) / 100.0)
          .put("redisBytes", Math.round(redisPerTx))
          .put("allocKB", allocated < 0 ? -1 : Math.round(allocated / 1024.0 / n * 10) / 10.0)
          .put("heapMB", Math.round(heapMb * 10) / 10.0);
      System.err.println("bench: per transaction: " + perTx.encode());
      out.println(new io.vertx.core.json.JsonObject(line).put("redisMode", config.redis().mode().name()
          .toLowerCase(java.util.Locale.ROOT)).put("partitions", config.redis().partitions()).put("masters", masters)
          .put("perTx", perTx).encode());
      out.flush();
      return result.finished() == options.transactions() ? 0 : 1;
    } catch (IllegalArgumentException e) {
      System.err.println("bench: " + e.getMessage());
      return 2;
    } catch (Throwable e) {
      System.err.println("bench: the run failed: " + e);
      return 1;
    } finally {
      cleanUp(node, client);
    }
  }

  /**
   * Each master's share of the Redis CPU the run used and of the transaction keys it left (completed, not yet
   * archived), and the commands it processed, from the figures before and after.
   */
  private static io.vertx.core.json.JsonObject shares(Map<String, RedisChores.Master> before,
                                                      Map<String, RedisChores.Master> after) {
    double cpu = 0;
    long keys = 0;
    for (Map.Entry<String, RedisChores.Master> e : after.entrySet()) {
      RedisChores.Master b = before.get(e.getKey());
      cpu += e.getValue().cpuSeconds() - (b == null ? 0 : b.cpuSeconds());
      keys += e.getValue().stateKeys();
    }
    io.vertx.core.json.JsonObject out = new io.vertx.core.json.JsonObject();
    for (Map.Entry<String, RedisChores.Master> e : after.entrySet()) {
      RedisChores.Master b = before.get(e.getKey());
      double used = e.getValue().cpuSeconds() - (b == null ? 0 : b.cpuSeconds());
      out.put(e.getKey(), new io.vertx.core.json.JsonObject()
          .put("cpuShare", cpu == 0 ? 0 : Math.round(1000 * used / cpu) / 1000.0)
          .put("cpuSeconds", Math.round(used * 100) / 100.0)
          .put("keyShare", keys == 0 ? 0 : Math.round(1000.0 * e.getValue().stateKeys() / keys) / 1000.0)
          .put("commands", e.getValue().commands() - (b == null ? 0 : b.commands())));
    }
    return out;
  }

  /**
   * Runs unmeasured transactions first so the measured ones meet compiled code, not the interpreter; then
   * waits a second for the JIT compiler, which would otherwise compete for the same cores.
   */
  private static void warmUp(BenchClient client, BenchOptions options) throws InterruptedException {
    if (options.warmup() == 0) {
      return;
    }
    Result warm = client.run("warm-up", options.warmupRun(), !options.queueOnly()).await();
    System.err.println("bench: warm-up: " + (options.queueOnly() ? warm.queueLine(0, 0) : warm.line()));
    Thread.sleep(1000);
  }

  /** Heap in use once garbage is gone: what the node (and the bench's small arrays) really hold. */
  /** This JVM's CPU time so far, every thread (ns); -1 when the platform does not tell. */
  private static long processCpuNanos() {
    return java.lang.management.ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os ? os.getProcessCpuTime() : -1;
  }

  /** Bytes each live thread of this JVM has allocated so far, by thread id (empty when the platform does not tell). */
  private static Map<Long, Long> allocatedBytes() {
    Map<Long, Long> by = new java.util.HashMap<>();
    if (java.lang.management.ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
        && t.isThreadAllocatedMemorySupported() && t.isThreadAllocatedMemoryEnabled()) {
      long[] ids = t.getAllThreadIds();
      long[] bytes = t.getThreadAllocatedBytes(ids);
      for (int i = 0; i < ids.length; i++) {
        if (bytes[i] >= 0) {
          by.put(ids[i], bytes[i]);
        }
      }
    }
    return by;
  }

  /**
   * Bytes the JVM's threads allocated since before (every thread alive now: the node's and the bench's event loops
   * live through the run; a thread that ended in it takes its count along), or -1 when the platform does not tell.
   */
  private static long allocatedSince(Map<Long, Long> before) {
    Map<Long, Long> now = allocatedBytes();
    if (now.isEmpty()) {
      return -1;
    }
    long sum = 0;
    for (Map.Entry<Long, Long> e : now.entrySet()) {
      sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
    }
    return sum;
  }

  private static long heapUsedAfterGc() {
    Runtime rt = Runtime.getRuntime();
    for (int i = 0; i < 3; i++) {
      System.gc(); // a hint; a few rounds let finalisation and reference queues settle
    }
    return rt.totalMemory() - rt.freeMemory();
  }

  static void cleanUp(Node node, BenchClient client) {
    try {
      long removed = client.deleteKeys().await(60, TimeUnit.SECONDS);
      System.err.printf("bench: removed %d keys under %s%n", removed, node.redis().keys().prefix());
    } catch (Throwable e) {
      System.err.println("bench: could not remove the keys under " + node.redis().keys().prefix() + ": " + e.getMessage());
    }
    try {
      node.stop().await(30, TimeUnit.SECONDS);
    } catch (Throwable e) {
      System.err.println("bench: the node did not stop cleanly: " + e.getMessage());
    }
    try {
      long late = sweep(node);
      if (late > 0) {
        System.err.printf("bench: removed %d more written back before the node stopped%n", late);
      }
    } catch (Throwable e) {
      System.err.println("bench: could not sweep the keys under " + node.redis().keys().prefix() + ": " + e.getMessage());
    }
  }

  /**
   * The last sweep, once the node has stopped, on a Vert.x of the bench's own: between the clean-up and the stop
   * the node's heartbeat writes back what it finds missing (its pipelines: seven keys a run were left before).
   */
  private static long sweep(Node node) throws Exception {
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    try {
      io.vertx.core.Promise<Long> removed = io.vertx.core.Promise.promise();
      vertx.getOrCreateContext().runOnContext(v -> {
        io.conveyor.redis.StoreContext redis = node.redis().open(vertx);
        RedisChores.deletePrefix(redis.link(), vertx, node.redis().keys().prefix())
            .eventually(() -> redis.close()).onComplete(removed);
      });
      return removed.future().await(60, TimeUnit.SECONDS);
    } finally {
      vertx.close().await(10, TimeUnit.SECONDS);
    }
  }
}
