package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.config.Config;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.RedisClusterFixture;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Redis Cluster link routes each command to its slot's master itself (SlotRouter), on real clusters of 3 masters
 * with a replica each: one master's death fails only its slots' commands. Excluded from the Redis Cluster pass
 * (its clusters are its own).
 */
class SlotRouterTest {
  private static RedisClusterFixture shared;
  private final Vertx vertx = Vertx.vertx();
  private final Keys keys = new Keys("router-" + UUID.randomUUID().toString().substring(0, 8) + ":", 3);
  private final Scripts scripts = new Scripts(true);
  /** What the healthy partitions' failures said during a failover (digits masked). */
  private final Set<String> healthyErrors = new java.util.TreeSet<>();

  @BeforeAll
  static void startCluster() {
    shared = RedisClusterFixture.start(3, 1);
  }

  @AfterAll
  static void stopCluster() {
    shared.close();
  }

  @AfterEach
  void close() {
    vertx.close().await();
  }

  private RedisLink link(RedisClusterFixture cluster) {
    Config.Redis redis = new Config.Redis(Config.RedisMode.CLUSTER, cluster.endpoints(), "", keys.prefix(), 3, null,
        100, Duration.ofSeconds(1), 0, Duration.ofSeconds(1));
    return new RedisLink(vertx, RedisLink.options(redis), Duration.ofSeconds(1));
  }

  private static Request set(String key, String value) {
    return Request.cmd(Command.SET).arg(key).arg(value);
  }

  @Test
  void commands_scripts_and_batches_reach_the_master_of_each_partitions_slot() {
    RedisLink link = link(shared);
    Set<Integer> masters = new java.util.HashSet<>();
    for (int p : keys.all()) {
      String key = keys.stateH(p, "x");
      int master = shared.masterOfKey(key);
      masters.add(master);
      assertEquals("OK", link.send(set(key, "v" + p)).await().toString());
      assertEquals("v" + p, shared.cmd(master, "GET", key).trim(), "written on the slot's own master");
      // a script with a write, and the same followed by WAIT in one batch (the keyless WAIT rides along)
      Scripts.run(link, scripts.sent(scripts.memory), List.of(keys.eventsL(p)),
          List.of("1", "redis-memory-high", "node-x", "{}")).await();
      Scripts.run(link, scripts.sent(scripts.memory), List.of(keys.eventsL(p)),
          List.of("2", "redis-memory-ok", "node-x", "{}"), new Replicas(1, Duration.ofSeconds(2))).await();
      assertEquals("2", shared.cmd(master, "LLEN", keys.eventsL(p)).trim(), "both scripts ran on the slot's master");
    }
    assertEquals(3, masters.size(), "the three partitions are on three masters");
    assertEquals("PONG", link.send(Request.cmd(Command.PING)).await().toString(), "a keyless command goes to any");
    String sha = link.send(Request.cmd(Command.SCRIPT).arg("LOAD").arg("return 7")).await().toString();
    for (int master : shared.masterPorts()) {
      assertEquals("1", shared.cmd(master, "SCRIPT", "EXISTS", sha).trim(), "SCRIPT LOAD reached master " + master);
    }
    link.close().await();
  }

  @Test
  void a_slot_given_to_another_master_is_followed_by_ask_while_it_migrates_and_by_moved_after() {
    RedisLink link = link(shared);
    String key = "{moving-" + UUID.randomUUID() + "}:k";
    int slot = SlotMap.slotOf(key);
    int from = shared.masterOfKey(key);
    int to = shared.masterPorts().stream().filter(p -> p != from).findFirst().orElseThrow();
    assertEquals("OK", link.send(set(key + "-probe", "x")).await().toString(), "the map is read");
    shared.cmd(from, "DEL", key + "-probe");
    assertEquals("0", shared.cmd(from, "CLUSTER", "COUNTKEYSINSLOT", Integer.toString(slot)).trim(), "an empty slot");
    String fromId = shared.cmd(from, "CLUSTER", "MYID").trim();
    String toId = shared.cmd(to, "CLUSTER", "MYID").trim();
    shared.cmd(to, "CLUSTER", "SETSLOT", Integer.toString(slot), "IMPORTING", fromId);
    shared.cmd(from, "CLUSTER", "SETSLOT", Integer.toString(slot), "MIGRATING", toId);
    // the old owner has no such key: it answers ASK, and the link asks the new one
    assertEquals("OK", link.send(set(key, "asked")).await().toString());
    for (int port : shared.ports()) {
      shared.cmd(port, "CLUSTER", "SETSLOT", Integer.toString(slot), "NODE", toId);
    }
    assertEquals("asked", shared.cmd(to, "GET", key).trim(), "written on the importing master");
    // the old owner answers MOVED: the command follows, and a batch too
    assertEquals("OK", link.send(set(key, "moved")).await().toString());
    assertEquals("moved", shared.cmd(to, "GET", key).trim(), "written on the new owner");
    assertEquals("moved", link.batch(List.of(Request.cmd(Command.GET).arg(key))).await().get(0).toString());
    assertEquals("0", shared.cmd(from, "CLUSTER", "COUNTKEYSINSLOT", Integer.toString(slot)).trim(),
        "nothing on the old owner");
    link.close().await();
  }

  @Test
  void a_dedicated_connection_hears_publishes_made_on_every_master_and_each_partitions_shard_channel() {
    RedisLink link = link(shared);
    Queue<String> heard = new ConcurrentLinkedQueue<>();
    RedisConnection c = link.dedicated().await();
    c.handler(push -> {
      if (Keys.isMessage(push)) {
        heard.add(push.get(1) + "=" + push.get(2));
      }
    });
    c.send(Request.cmd(Command.CLIENT).arg("SETNAME").arg("router-test")).await();
    c.send(Request.cmd(Command.SUBSCRIBE).arg(keys.prefix() + "plain")).await();
    keys.all().forEach(p -> c.send(Request.cmd(Command.SSUBSCRIBE).arg(keys.notifyChannel(p))).await());
    List<String> expected = new ArrayList<>();
    for (int master : shared.masterPorts()) {
      shared.cmd(master, "PUBLISH", keys.prefix() + "plain", "from-" + master);
      expected.add(keys.prefix() + "plain=from-" + master);
    }
    for (int p : keys.all()) {
      shared.cmd(shared.masterOfKey(keys.notifyChannel(p)), "SPUBLISH", keys.notifyChannel(p), "p" + p);
      expected.add(keys.notifyChannel(p) + "=p" + p);
    }
    Eventually.until(Duration.ofSeconds(5), "every publish heard", () -> new java.util.HashSet<>(heard),
        h -> h.containsAll(expected));
    c.close().await();
    link.close().await();
  }

  /**
   * kill -9 of the master of partition 0: while its commands fail, the other partitions' succeed; after its replica
   * took over (bounded wait), its commands succeed again; and a new dedicated connection lands on a live master. With
   * Redis's default cluster-require-full-coverage (yes), every master answers CLUSTERDOWN from the moment the dead one
   * is marked failed until its replica is promoted: the others succeed only before and after that window.
   */
  @Test
  void a_dead_master_fails_only_its_own_slots_until_its_replica_takes_over() {
    int[] healthy = failover(true);
    assertTrue(healthy[0] > healthy[1], healthy[0] + " healthy commands succeeded, " + healthy[1] + " failed");
  }

  /** The same with cluster-require-full-coverage no: the other masters never stop answering. */
  @Test
  void without_full_coverage_the_other_masters_answer_every_command_throughout_a_failover() {
    int[] healthy = failover(false);
    assertEquals(0, healthy[1], "healthy commands that failed: " + healthyErrors);
  }

  /**
   * SIGSTOP of the master of partition 0 (a paused or hung master: it answers nothing and closes nothing), with a
   * link whose commands time out only after 60 s: once its replica has taken over, partition 0's commands go to the
   * new master and succeed while the old one is still stopped, because a master that leaves commands unanswered
   * for a second counts as failing and has the slot map re-read; and the command left on the stopped master fails
   * once the map no longer names it. Before, the map kept the slot on the stopped master until its commands timed
   * out, so every command waited the whole timeout.
   */
  @Test
  void a_paused_master_loses_its_slots_to_the_replica_that_took_over_before_its_commands_time_out() {
    try (RedisClusterFixture cluster = RedisClusterFixture.start(3, 1)) {
      cluster.ports().forEach(port -> cluster.cmd(port, "CONFIG", "SET", "cluster-require-full-coverage", "no"));
      Config.Redis redis = new Config.Redis(Config.RedisMode.CLUSTER, cluster.endpoints(), "", keys.prefix(), 3, null,
          100, Duration.ofSeconds(1), 0, Duration.ofSeconds(1));
      RedisLink link = new RedisLink(vertx, RedisLink.options(redis), Duration.ofSeconds(60));
      String key = keys.stateH(0, "x");
      int paused = cluster.masterOfKey(key);
      int other = cluster.masterPorts().stream().filter(p -> p != paused).findFirst().orElseThrow();
      link.send(set(key, "before")).await();
      cluster.pause(paused, true);
      try {
        long stoppedAt = System.nanoTime();
        Future<Response> hung = link.send(set(key, "to the stopped master"));
        Response answered = Eventually.until(Duration.ofSeconds(30), Duration.ofMillis(100),
            "a command on partition 0 answered by the master that took over", () -> {
              Future<Response> f = link.send(set(key, "after")).timeout(500, java.util.concurrent.TimeUnit.MILLISECONDS);
              return f.otherwiseEmpty().await();
            }, r -> r != null);
        long tookMs = (System.nanoTime() - stoppedAt) / 1_000_000;
        assertEquals("OK", answered.toString());
        // the command left on the stopped master fails once the map no longer names it, not at its 60 s timeout
        Eventually.until(Duration.ofSeconds(10), "the command out on the stopped master to fail", hung::isComplete,
            done -> done);
        assertTrue(hung.failed(), "it failed (outcome unknown, as at a timeout): " + hung.result());
        long failedMs = (System.nanoTime() - stoppedAt) / 1_000_000;
        assertTrue(ProcessHandle.of(cluster.pid(paused)).map(ProcessHandle::isAlive).orElse(false),
            "the paused master is still there, stopped");
        assertEquals("after", cluster.clusterCmd(other, "GET", key), "the new master has the write");
        System.out.printf("a paused master: partition 0's first command answered by its replica %d ms after the "
            + "SIGSTOP, the one left on it failed after %d ms (%s), with a 60 s command timeout%n", tookMs, failedMs,
            hung.cause().getMessage());
      } finally {
        cluster.pause(paused, false);
      }
      link.close().await();
    }
  }


  /** Runs the failover; the healthy partitions' commands while partition 0's failed: {succeeded, failed}. */
  private int[] failover(boolean fullCoverage) {
    try (RedisClusterFixture cluster = RedisClusterFixture.start(3, 1)) {
      if (!fullCoverage) {
        cluster.ports().forEach(port -> cluster.cmd(port, "CONFIG", "SET", "cluster-require-full-coverage", "no"));
      }
      RedisLink link = link(cluster);
      int dead = cluster.masterOfKey(keys.stateH(0, "x"));
      List<Integer> healthy = keys.all().stream()
          .filter(p -> cluster.masterOfKey(keys.stateH(p, "x")) != dead).toList();
      assertFalse(healthy.isEmpty(), "some partition on another master");
      keys.all().forEach(p -> link.send(set(keys.stateH(p, "x"), "before")).await());
      cluster.kill(dead);
      List<boolean[]> rounds = new ArrayList<>();
      boolean[] saidFailing = {false};
      Eventually.until(Duration.ofSeconds(30), Duration.ofMillis(20), "partition 0 to answer again after failing",
          () -> {
            rounds.add(round(link, healthy));
            saidFailing[0] |= !rounds.get(rounds.size() - 1)[0] && link.failing(keys.stateH(0, "x"));
            return rounds;
          }, r -> r.stream().anyMatch(x -> !x[0]) && r.get(r.size() - 1)[0]);
      assertTrue(saidFailing[0], "the link said partition 0's master was failing while it failed");
      assertFalse(link.failing(keys.stateH(0, "x")), "and no more once its replica answered");
      int deadFailing = 0;
      int healthyOk = 0;
      int healthyFailed = 0;
      for (boolean[] r : rounds) {
        if (!r[0]) {
          deadFailing++;
          for (int i = 1; i < r.length; i++) {
            healthyOk += r[i] ? 1 : 0;
            healthyFailed += r[i] ? 0 : 1;
          }
        }
      }
      System.out.printf("failover (full coverage %s): %d rounds; while partition 0's master was down (%d rounds), "
          + "%d commands to the other masters succeeded and %d failed (%s)%n", fullCoverage, rounds.size(), deadFailing,
          healthyOk, healthyFailed, healthyErrors);
      assertTrue(rounds.stream().anyMatch(r -> !r[0] && allHealthy(r)),
          "a round where partition 0 failed while every other partition answered");
      assertTrue(cluster.masterOfKey(keys.stateH(0, "x")) != dead, "a replica took over");
      assertEquals("during", link.send(Request.cmd(Command.GET).arg(keys.stateH(healthy.get(0), "x"))).await()
          .toString());
      RedisConnection c = link.dedicated().await();
      assertEquals("PONG", c.send(Request.cmd(Command.PING)).await().toString(), "a dedicated one on a live master");
      c.close().await();
      link.close().await();
      return new int[] {healthyOk, healthyFailed};
    }
  }

  private static boolean allHealthy(boolean[] r) {
    for (int i = 1; i < r.length; i++) {
      if (!r[i]) {
        return false;
      }
    }
    return true;
  }

  /** One SET per partition at once: [partition 0 answered, then each healthy one answered]. */
  private boolean[] round(RedisLink link, List<Integer> healthy) {
    List<Integer> parts = new ArrayList<>(List.of(0));
    parts.addAll(healthy);
    List<Future<Response>> sent = new ArrayList<>();
    parts.forEach(p -> sent.add(link.send(set(keys.stateH(p, "x"), "during"))));
    Future.join(sent).otherwiseEmpty().await();
    boolean[] ok = new boolean[parts.size()];
    for (int i = 0; i < ok.length; i++) {
      ok[i] = sent.get(i).succeeded();
      if (i > 0 && !ok[i]) {
        healthyErrors.add(String.valueOf(sent.get(i).cause().getMessage()).replaceAll("\\d+", "N"));
      }
    }
    return ok;
  }
}
