package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.conveyor.config.ConfigException;
import io.conveyor.testing.TestRedis;
import io.vertx.core.Vertx;
import java.time.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The keyspace's layout: recorded by the first node, and a node of another layout refuses to start. */
class LayoutStoreTest {
  private final String prefix = TestRedis.newPrefix().replaceAll("[{}]", "");
  private final Vertx vertx = Vertx.vertx();
  private final RedisLink link = new RedisLink(vertx, TestRedis.options(1000));

  private void check(int partitions) {
    new LayoutStore(new StoreContext(link, new Keys(prefix, partitions), new Scripts(), Clock.systemUTC()))
        .check().await();
  }

  @AfterEach
  void drop() {
    link.close().await();
    vertx.close().await();
    TestRedis.drop(prefix);
  }

  @Test
  void the_first_node_records_its_partitions_and_a_node_with_another_number_is_refused() {
    assumeFalse(TestRedis.clusterMode(), "one-partition keys under a prefix without a hash tag span slots");
    check(3);
    check(3);
    assertEquals("3", cmd("HGET", new Keys(prefix, 3).layoutH(), "partitions").toString());
    ConfigException five = assertThrows(ConfigException.class, () -> check(5));
    assertTrue(five.getMessage().contains("was made with 3 partition(s)") && five.getMessage().contains("has 5"),
        five.getMessage());
    assertTrue(assertThrows(ConfigException.class, () -> check(1)).getMessage().contains("made with 3"),
        "a one-partition node must not miss a partitioned keyspace");
  }

  @Test
  void data_of_the_one_partition_layout_is_never_read_as_a_partitioned_keyspace() {
    assumeFalse(TestRedis.clusterMode(), "one-partition keys under a prefix without a hash tag span slots");
    cmd("ZADD", new Keys(prefix).nodesZ(), "1", "node-old"); // written by a release before layoutH
    ConfigException e = assertThrows(ConfigException.class, () -> check(3));
    assertTrue(e.getMessage().contains("made with 1 partition(s)"), e.getMessage());
    check(1);
    assertEquals("1", cmd("HGET", new Keys(prefix).layoutH(), "partitions").toString());
  }
}
