package io.conveyor.bench.chaos;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * One run of a redis-cluster scenario: a Redis Cluster of its own (ClusterRedis), three nodes (--nodes) in cluster mode on its
 * masters with 6 partitions and redis.waitReplicas=1, a one-step pipeline, the PartitionLoad, a 30 s warm-up, then
 * kill -9 (or SIGSTOP 10 s, then SIGCONT) of the master holding partition 0. DURING runs from the fault until a
 * healthy master says (CLUSTER INFO, CLUSTER NODES) the cluster is ok and the faulted partitions' slots are served by
 * a master that is not failing and answers PING; then the rest of the load, and every acknowledged start read back.
 */
final class ClusterRun {
  static final int PARTITIONS = 6;
  private static final long RECOVERY_BOUND_MS = 60_000;
  private final ChaosOptions options;
  private final RedisServer redis;
  private final PgServer pg;

  ClusterRun(ChaosOptions options, RedisServer redis, PgServer pg) {
    this.options = options;
    this.redis = redis;
    this.pg = pg;
  }

  Row run(Scenario scenario, int run, Path dir) throws Exception {
    System.err.println("chaos: " + scenario.label + " run " + run + ": starting a Redis Cluster (3 masters, 2 replicas"
        + " each, AOF everysec)");
    ClusterRedis cluster = ClusterRedis.start();
    Rig rig = null;
    try {
      List<Integer> masterOf = cluster.mastersOfPartitions(PARTITIONS);
      int victim = masterOf.get(0);
      Set<Integer> dead = IntStream.range(0, PARTITIONS).filter(p -> masterOf.get(p) == victim).boxed()
          .collect(Collectors.toSet());
      int healthyPort = masterOf.stream().filter(p -> p != victim).findFirst().orElseThrow();
      List<Integer> deadSlots = dead.stream().map(p -> ClusterRedis.slotOf(p, PARTITIONS)).toList();
      System.err.println("chaos:   masters of partitions 0.." + (PARTITIONS - 1) + ": " + masterOf + "; the fault hits "
          + victim + " (partitions " + dead + ")");
      String endpoints = cluster.endpoints();
      Map<String, String> env = Map.of("CONVEYOR_REDIS_MODE", "cluster", "CONVEYOR_REDIS_ENDPOINTS", endpoints,
          "CONVEYOR_REDIS_URL", endpoints.split(",")[0], "CONVEYOR_REDIS_PARTITIONS", Integer.toString(PARTITIONS),
          "CONVEYOR_REDIS_WAIT_REPLICAS", "1");
      System.err.println("chaos:   starting " + options.nodes() + " node" + (options.nodes() == 1 ? "" : "s")
          + " (logs in " + dir + ")");
      rig = Rig.start(redis, pg, dir, options.stepMillis(), env, options.notIdempotent(), options.tls(), 1, true,
          options.nodes());
      PartitionLoad load = new PartitionLoad(rig, options.rate(), scenario.label + "-" + run + "-" + rig.table);
      // the warm-up (--warmup, 30 s) should outlast the nodes' JIT at the machine's pace; BEFORE is only its last 10 s
      int warmup = options.warmupSeconds();
      long loadSeconds = Math.max(options.durationSeconds(), warmup + scenario.outageSeconds + 20);
      long beginNanos = System.nanoTime();
      long beginWall = System.currentTimeMillis();
      load.start();
      Procs.sleep(warmup * 1000L);
      System.err.println("chaos:   warmed up: " + load.progress());
      String loadAtFault = loadAverage();
      long pid = cluster.fixture.pid(victim);
      long t0 = System.nanoTime();
      if (scenario == Scenario.REDIS_CLUSTER_MASTER_KILL) {
        cluster.fixture.kill(victim);
      } else {
        Procs.signal(pid, "STOP");
      }
      System.err.println("chaos:   " + (scenario == Scenario.REDIS_CLUSTER_MASTER_KILL ? "killed" : "paused")
          + " master " + victim + " (pid " + pid + ")");
      long[] okAt = {0};
      Thread watch = new Thread(() -> okAt[0] = awaitOk(healthyPort, deadSlots, t0), "cluster-watch");
      watch.start();
      if (scenario == Scenario.REDIS_CLUSTER_MASTER_PAUSE) {
        Procs.sleep(scenario.outageSeconds * 1000L);
        Procs.signal(pid, "CONT");
        System.err.println("chaos:   SIGCONT to " + victim);
      }
      watch.join(RECOVERY_BOUND_MS + 5000);
      long t1 = okAt[0];
      String newMaster = t1 == 0 ? "?" : Integer.toString(ClusterRedis.servingPort(
          nonNull(ClusterRedis.cli(healthyPort, "CLUSTER", "NODES")), deadSlots.get(0)));
      System.err.println("chaos:   cluster ok " + (t1 == 0 ? "not within the bound" : String.format(
          java.util.Locale.ROOT, "%.1f s after the fault", (t1 - t0) / 1e9)) + "; partition 0's master now "
          + newMaster);
      long left = loadSeconds * 1000 - (System.nanoTime() - beginNanos) / 1_000_000;
      if (left > 0) {
        Procs.sleep(left);
      }
      load.stop(60_000);
      long end = System.currentTimeMillis() + 65_000;
      while (load.pending() > 0 && System.currentTimeMillis() < end) {
        Procs.sleep(500);
      }
      String loadAtEnd = loadAverage();
      System.err.println("chaos:   load stopped: " + load.progress());
      ClusterTally tally = ClusterTally.of(rig, load.starts, PARTITIONS, 120_000);
      ClusterReport report = new ClusterReport(load.starts, tally, PARTITIONS, dead, t0, t1 == 0 ? Long.MAX_VALUE : t1,
          beginNanos, beginWall);
      report.writeRaw(dir.resolve("starts.tsv"));
      Files.writeString(dir.resolve("completions.tsv"), report.completionSeries());
      String title = scenario.label + " run " + run + ": " + (scenario == Scenario.REDIS_CLUSTER_MASTER_KILL
          ? "kill -9" : "SIGSTOP " + scenario.outageSeconds + " s") + " of master " + victim + " (partitions " + dead
          + "), partition 0's master after: " + newMaster + "; load average at the fault " + loadAtFault
          + ", at the end " + loadAtEnd;
      System.out.println();
      System.out.println(title);
      System.out.println();
      System.out.println(report.markdown());
      System.out.println(report.completionSeries());
      Executions ex = rig.driver.executions;
      String notes = report.headline() + "; load average " + loadAtFault + " at the fault, " + loadAtEnd
          + " at the end; statuses " + tally.statuses + "; start retries " + load.retries.get();
      return new Row(scenario.label, run, load.started(), report.lost(), tally.failed, tally.internalError,
          ex.duplicates(), ex.effectsDuplicated(), 0, 0, 0, 0, t1 == 0 ? Double.NaN : (t1 - t0) / 1e9,
          RECOVERY_BOUND_MS / 1000.0, notes);
    } finally {
      if (rig != null) {
        rig.close();
      }
      cluster.close();
    }
  }

  /** Polls (every 100 ms, bounded) until ClusterRedis.notOk says nothing; the nanoTime then, 0 if never. */
  private static long awaitOk(int healthyPort, List<Integer> slots, long t0) {
    String last = "";
    while (System.nanoTime() - t0 < RECOVERY_BOUND_MS * 1_000_000) {
      String missing = ClusterRedis.notOk(healthyPort, slots);
      if (missing == null) {
        return System.nanoTime();
      }
      if (!missing.equals(last)) {
        System.err.println(String.format(java.util.Locale.ROOT, "chaos:   +%.1f s: %s", (System.nanoTime() - t0) / 1e9,
            missing));
        last = missing;
      }
      Procs.sleep(100);
    }
    return 0;
  }

  /** The 1-minute load average (/proc/loadavg), for the table: the machine's two cores are shared. */
  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    } catch (java.io.IOException e) {
      return "?";
    }
  }

  private static String nonNull(String s) {
    return s == null ? "" : s;
  }
}
