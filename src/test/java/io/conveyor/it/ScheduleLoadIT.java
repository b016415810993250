package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.redis.Keys;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.NodeProcess;
import io.conveyor.testing.TestCluster;
import io.conveyor.testing.TestRedis;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Schedules firing every second on three node processes while the scheduler leader is killed (kill -9) halfway:
 * every planned fire time of the window started exactly once (one transaction per externalId, as many
 * transactions as fires), the lag (start − planned fire) stays low outside the failover, the failover gap is
 * short, and the purgatory is empty at the end. In the suite: 60 schedules for 8 s; the figures come
 * from -Dschedule.load.schedules=1000 -Dschedule.load.seconds=60.
 */
class ScheduleLoadIT {
  private static final int SCHEDULES = Integer.getInteger("schedule.load.schedules", 60);
  private static final int SECONDS = Integer.getInteger("schedule.load.seconds", 8);
  private static final long LEASE_MS = 2000;
  private static final long GRACE_MS = 1000;
  private static final long REDRIVE_MS = 1000;
  /**
   * The longest lag a fire may have around the kill, by design: the dead leader's lease runs out and its grace
   * passes (lease + grace after its last renewal), and a fire it had moved to the purgatory but not started yet
   * is driven again once it has sat there redriveAfter; plus 3 s for a round of 60 starts on a loaded two-core
   * machine. A broken takeover or redrive leaves a fire late by far more, or never started.
   */
  private static final long GAP_BOUND_MS = LEASE_MS + GRACE_MS + REDRIVE_MS + 3000;

  @Test
  @Timeout(600)
  void every_fire_starts_exactly_once_through_a_kill_of_the_scheduler_leader() throws Exception {
    String prefix = TestRedis.newPrefix();
    Keys keys = new Keys(prefix);
    Path dir = Files.createTempDirectory("schedule-load");
    Path pipelines = Files.createDirectories(dir.resolve("pipelines"));
    Path schedules = Files.createDirectories(dir.resolve("schedules"));
    Files.writeString(pipelines.resolve("beat.json"), "{\"name\":\"beat\",\"nodeGroup\":\"master\","
        + "\"transactionType\":true,\"steps\":[{\"type\":\"util/fixed-reply\",\"params\":{\"reply\":{}}}]}");
    for (int i = 0; i < SCHEDULES; i++) {
      Files.writeString(schedules.resolve("s" + i + ".json"), "{\"pipeline\":\"beat\",\"owner\":\"acme\","
          + "\"every\":\"1s\",\"overlap\":\"allow\",\"until\":\"2100-01-01T00:00:00Z\"}");
    }
    String cluster = TestCluster.newName();
    List<NodeProcess> nodes = new ArrayList<>();
    Map<String, NodeProcess> byId = new HashMap<>();
    try {
      for (int i = 0; i < 3; i++) {
        Map<String, String> env = new HashMap<>(TestRedis.env());
        env.putAll(Map.of("CONVEYOR_REDIS_PREFIX", prefix, "CONVEYOR_CLUSTER_NAME", cluster,
            "CONVEYOR_PIPELINES_DIR", pipelines.toString(), "CONVEYOR_SCHEDULES_DIR", schedules.toString(),
            "CONVEYOR_HTTP_PORT", Integer.toString(TestRedis.freePort()), "CONVEYOR_ARCHIVE_DELAY", "30m",
            "CONVEYOR_HEARTBEAT_INTERVAL", "500ms", "CONVEYOR_HEARTBEAT_TTL", "2s",
            "CONVEYOR_NODE_DRAIN_TIME", "200ms"));
        env.putAll(Map.of("CONVEYOR_SCHEDULES_LEASE", LEASE_MS + "ms", "CONVEYOR_SCHEDULES_GRACE", GRACE_MS + "ms",
            "CONVEYOR_SCHEDULES_REDRIVE_AFTER", REDRIVE_MS + "ms"));
        NodeProcess n = NodeProcess.start("schedule-load-" + i, env);
        nodes.add(n);
      }
      for (NodeProcess n : nodes) {
        byId.put(n.awaitLine(" started: group master", Duration.ofSeconds(90)).replaceAll(".*node (node-\\w+).*", "$1"),
            n);
      }
      long windowStart = (System.currentTimeMillis() / 1000 + 2) * 1000; // fires from here on are the window's
      long windowEnd = windowStart + SECONDS * 1000L;
      Duration bound = Duration.ofSeconds(SECONDS + 30);
      // halfway through the window: the fire of the middle second has started
      String middle = keys.externalId("acme", "schedule:s0:" + (windowStart + SECONDS / 2 * 1000L));
      Eventually.until(bound, "the middle of the window", () -> TestRedis.cmd("GET", middle), r -> r != null);
      String leader = TestRedis.cmd("GET", keys.lock1(io.conveyor.redis.LeaderRole.SCHEDULER, 0)).toString();
      long killedAt = System.currentTimeMillis();
      byId.get(leader).kill();
      long lastFire = windowEnd - 1000;

      // every fire of the window has its transaction, once
      List<Long> lags = new ArrayList<>();
      List<Long> failoverLags = new ArrayList<>();
      for (int i = 0; i < SCHEDULES; i++) {
        for (long f = windowStart; f <= lastFire; f += 1000) {
          String ext = keys.externalId("acme", "schedule:s" + i + ":" + f);
          io.vertx.redis.client.Response txId = Eventually.until(bound, "fire " + f + " of s" + i,
              () -> TestRedis.cmd("GET", ext), r -> r != null);
          io.vertx.redis.client.Response created = TestRedis.cmd("HGET", keys.stateH(txId.toString()), "created");
          assertNotNull(created, "the transaction of fire " + f + " of s" + i);
          long lag = Long.parseLong(created.toString()) - f;
          (f >= killedAt - 1000 && f <= killedAt + 6000 ? failoverLags : lags).add(lag);
        }
      }
      long expected = (long) SCHEDULES * ((lastFire - windowStart) / 1000 + 1);
      Eventually.until(Duration.ofSeconds(20), "the purgatory to empty",
          () -> TestRedis.cmd("ZCARD", keys.schedulePurgatoryZ(0)).toLong(), n -> n == 0);
      // the nodes stop, so what follows counts a state that no longer moves (a start writes both keys at once)
      NodeProcess.terminateAll(nodes, Duration.ofSeconds(30));
      long transactions = TestRedis.keys(prefix + "stateH:").size();
      long externalIds = TestRedis.keys(prefix + "externalId:acme:schedule:").size();
      lags.sort(null);
      long p99 = lags.get((int) Math.min(lags.size() - 1, Math.ceil(lags.size() * 0.99) - 1));
      long gap = failoverLags.stream().mapToLong(Long::longValue).max().orElse(0);
      System.out.printf("%d schedules x %d s: %d fires in the window, %d transactions in all; lag p50 %d ms, p99 %d ms "
              + "outside the failover; the longest lag around the kill of %s: %d ms%n", SCHEDULES, SECONDS, expected,
          transactions, lags.get(lags.size() / 2), p99, leader, gap);
      assertEquals(externalIds, transactions, "one transaction per fire, none twice");
      assertTrue(transactions >= expected, transactions + " transactions for " + expected + " fires in the window");
      // no fire away from the kill is later than the takeover's own bound: a fire that only a redrive or a new
      // leader started would be (the lag itself is a figure, printed above: the machine's load sets it, CI at
      // 9e1f814 saw p50 1,560 ms with another IT's three nodes busy beside it, 185 ms alone)
      assertTrue(p99 <= GAP_BOUND_MS, "lag p99 " + p99 + " ms outside the failover (bound " + GAP_BOUND_MS + " ms)");
      assertTrue(gap <= GAP_BOUND_MS, "failover gap " + gap + " ms (bound " + GAP_BOUND_MS + " ms)");
    } finally {
      for (NodeProcess n : nodes) {
        n.close();
      }
      TestRedis.drop(prefix);
    }
  }
}
