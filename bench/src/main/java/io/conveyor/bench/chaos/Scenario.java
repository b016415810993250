package io.conveyor.bench.chaos;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The faults the suite injects, by the name the command line takes, with how long each outage lasts. */
enum Scenario {
  KILL9_WORKER("kill9-worker", 0),
  KILL9_REAPER("kill9-reaper", 0),
  KILL9_ARCHIVE("kill9-archive", 0),
  KILL9_WEBHOOK("kill9-webhook", 0),
  SIGSTOP15("sigstop15", 15),
  SIGSTOP30("sigstop30", 30),
  REDIS_RESTART("redis-restart", 0),
  REDIS_EMPTY("redis-empty", 0),
  REDIS_DOWN30("redis-down30", 30),
  REDIS_FULL30("redis-full30", 30),
  ARCHIVE_DB_DOWN45("archive-db-down45", 45),
  WEBHOOK_RECEIVER_DOWN("webhook-receiver-down", 30),
  POISON_ROW("poison-row", 0),
  /** Not an outage: the span the load must outlast (waiting for a steady load, then the cycle and its end). */
  RUNAWAY_CYCLE("runaway-cycle", 30),
  /** On a Redis Cluster of its own (ClusterRun): kill -9 of the master of partition 0. */
  REDIS_CLUSTER_MASTER_KILL("redis-cluster-master-kill", 0),
  /** The same master SIGSTOPped for 10 s, then SIGCONT. */
  REDIS_CLUSTER_MASTER_PAUSE("redis-cluster-master-pause", 10);

  /** A failing URL is paused for webhooks.pause (10 min by default), longer than a run; this scenario shortens it. */
  static final String WEBHOOK_PAUSE = "20s";
  final String label;
  final int outageSeconds;

  Scenario(String label, int outageSeconds) {
    this.label = label;
    this.outageSeconds = outageSeconds;
  }

  static List<String> names() {
    return Arrays.stream(values()).map(s -> s.label).toList();
  }

  static Optional<Scenario> byName(String name) {
    return Arrays.stream(values()).filter(s -> s.label.equals(name)).findFirst();
  }

  /** A SIGSTOP scenario: run --pause-runs times, and the worst run shown. */
  boolean pause() {
    return this == SIGSTOP15 || this == SIGSTOP30;
  }

  /** Run on a Redis Cluster of its own (3 masters, 2 replicas each) rather than the suite's one Redis. */
  boolean redisCluster() {
    return this == REDIS_CLUSTER_MASTER_KILL || this == REDIS_CLUSTER_MASTER_PAUSE;
  }

  /** Settings this scenario needs beyond the run's defaults. */
  Map<String, String> env() {
    return this == WEBHOOK_RECEIVER_DOWN ? Map.of("CONVEYOR_WEBHOOKS_PAUSE", WEBHOOK_PAUSE) : Map.of();
  }
}
