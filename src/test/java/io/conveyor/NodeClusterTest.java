package io.conveyor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.config.Config;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class NodeClusterTest {
  private static final Config.Cluster UNNAMED = new Config.Cluster(true, "cluster.xml", "", "127.0.0.1");

  private static Config.Redis redis(String url, String prefix) {
    return new Config.Redis(Config.RedisMode.STANDALONE, java.util.List.of(url), "", prefix, 1, Config.Embedded.NEVER,
        100, Duration.ofSeconds(1), 0, Duration.ofSeconds(1));
  }

  @Test
  void a_redis_cluster_is_told_by_its_seed_nodes_in_any_order() {
    Config.Redis a = new Config.Redis(Config.RedisMode.CLUSTER, java.util.List.of("redis://10.0.0.2:7000",
        "redis://:pw@10.0.0.1:7000"), "", "{c}:", 1, Config.Embedded.NEVER, 100, Duration.ofSeconds(1), 0,
        Duration.ofSeconds(1));
    Config.Redis b = new Config.Redis(Config.RedisMode.CLUSTER, java.util.List.of("redis://10.0.0.1:7000",
        "redis://10.0.0.2:7000"), "", "{c}:", 1, Config.Embedded.NEVER, 100, Duration.ofSeconds(1), 0,
        Duration.ofSeconds(1));
    assertEquals("cluster:redis://10.0.0.1:7000/0,redis://10.0.0.2:7000/0 {c}:", NodeCluster.redisOf(a));
    assertEquals(NodeCluster.nameFor(UNNAMED, a), NodeCluster.nameFor(UNNAMED, b));
  }

  @Test
  void nodes_that_share_redis_keys_share_a_cluster_name_and_others_do_not() {
    String name = NodeCluster.nameFor(UNNAMED, redis("redis://127.0.0.1:6379", "conveyor:"));
    assertTrue(name.matches("conveyor-[0-9a-f]{8}"), name);
    assertEquals(name, NodeCluster.nameFor(UNNAMED, redis("redis://:secret@127.0.0.1/0", "conveyor:")));
    assertNotEquals(name, NodeCluster.nameFor(UNNAMED, redis("redis://127.0.0.1:6379", "other:")));
    assertNotEquals(name, NodeCluster.nameFor(UNNAMED, redis("redis://127.0.0.1:6380", "conveyor:")));
    assertNotEquals(name, NodeCluster.nameFor(UNNAMED, redis("redis://127.0.0.1:6379/1", "conveyor:")));
  }

  @Test
  void cluster_name_when_set_is_the_name() {
    Config.Cluster named = new Config.Cluster(true, "cluster.xml", "shop", "127.0.0.1");
    assertEquals("shop", NodeCluster.nameFor(named, redis("redis://127.0.0.1:6379", "conveyor:")));
  }

  @Test
  void the_redis_a_member_announces_carries_no_password() {
    assertEquals("redis://db.example:6379/2 p:", NodeCluster.redisOf(redis("redis://u:pw@DB.example/2", "p:")));
    // a host name java.net.URI does not take as a host (an underscore, as docker-compose names them)
    assertEquals("redis://proj_redis_1:6379 p:", NodeCluster.redisOf(redis("redis://:pw@proj_redis_1:6379", "p:")));
  }
}
