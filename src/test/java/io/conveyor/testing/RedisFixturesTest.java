package io.conveyor.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The real-Redis fixtures do what chaos tests will lean on: keys spread over masters, a killed master replaced
 * with its data, and no server left behind. Slow by design (about 13 s for both on two cores): each fixture
 * takes 2-3 s to start and each test waits out a real failover, 2-4 s.
 */
@Tag("slow")
class RedisFixturesTest {
  private static final Duration FAILOVER = Duration.ofSeconds(30);

  @Test
  @Timeout(60)
  void a_killed_cluster_master_is_replaced_by_its_replica_and_its_keys_stay_readable() {
    List<Long> pids = new ArrayList<>();
    try (RedisClusterFixture cluster = RedisClusterFixture.start(3, 1)) {
      assertEquals(3, cluster.masterPorts().size());
      assertEquals(3, cluster.replicaPorts().size());
      List<Integer> nodes = cluster.ports();
      nodes.forEach(p -> pids.add(cluster.pid(p)));
      String prefix = TestRedis.newPrefix();
      Map<String, Integer> homes = new LinkedHashMap<>();
      for (int i = 0; i < 16; i++) {
        String key = "{p" + i + "}:" + prefix + "k";
        // sent to any node, the SET follows MOVED to the key's master; WAIT then counts its replica there
        assertEquals("OK\n1", cluster.session(nodes.get(i % nodes.size()), "SET " + key + " v" + i, "WAIT 1 1000"));
        homes.put(key, cluster.masterOfKey(key));
      }
      assertTrue(new HashSet<>(homes.values()).size() > 1, "keys on one master only: " + homes);

      int dead = homes.get("{p0}:" + prefix + "k");
      List<Integer> heirs = cluster.replicasOf(dead);
      cluster.kill(dead);
      cluster.awaitFailover(dead, FAILOVER);

      int survivor = cluster.masterPorts().get(0);
      homes.forEach((key, home) -> {
        int now = cluster.masterOfKey(key);
        assertTrue(home == dead ? heirs.contains(now) : now == home, key + " moved from " + home + " to " + now);
        assertEquals("v" + key.substring(2, key.indexOf('}')), cluster.clusterCmd(survivor, "GET", key));
      });
    }
    pids.forEach(pid -> assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "pid " + pid));
  }

  @Test
  @Timeout(60)
  void a_killed_sentinel_master_is_replaced_by_the_replica_and_its_key_stays_readable() {
    List<Long> pids = new ArrayList<>();
    try (RedisSentinelFixture redis = RedisSentinelFixture.start("conveyor")) {
      int master = redis.masterPort();
      int replica = redis.replicaPort();
      pids.addAll(List.of(redis.pid(master), redis.pid(replica)));
      redis.sentinelPorts().forEach(p -> pids.add(redis.pid(p)));
      String key = TestRedis.newPrefix() + "k";
      assertEquals("OK\n1", redis.session(master, "SET " + key + " v", "WAIT 1 1000"));

      redis.kill(master);
      redis.awaitFailover(master, FAILOVER);

      assertEquals(replica, redis.masterPort());
      assertEquals("v", redis.cmd(replica, "GET", key));
    }
    pids.forEach(pid -> assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "pid " + pid));
  }
}
