package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.NodeProcess;
import io.conveyor.testing.TestRedis;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A node whose verticle cannot start says why, stops what it started, and exits non-zero, all in bounded time. */
class StartFailureIT {

  @Test
  void a_node_whose_http_port_is_taken_logs_the_cause_and_exits_non_zero_within_ten_seconds() throws Exception {
    String prefix = TestRedis.newPrefix();
    try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
      Map<String, String> env = Map.of("CONVEYOR_REDIS_URL", TestRedis.url(), "CONVEYOR_REDIS_PREFIX", prefix,
          "CONVEYOR_CLUSTER_ENABLED", "false", "CONVEYOR_HTTP_HOST", "127.0.0.1",
          "CONVEYOR_HTTP_PORT", Integer.toString(taken.getLocalPort()),
          "CONVEYOR_ARCHIVE_URL", "h2:target/it-archives/" + prefix.replace(":", "") + "/archive");
      try (NodeProcess node = NodeProcess.start("start-failure", env)) {
        String cause = node.awaitLine("the node did not start", Duration.ofSeconds(60));
        assertTrue(cause.contains("HTTP API verticle did not start") && cause.contains("already in use"), cause);
        assertNotEquals(0, node.awaitExit(Duration.ofSeconds(10)));
        // what it had started is stopped again: its heartbeat is gone, so nobody mistakes it for a live node
        assertTrue(TestRedis.keys(prefix + "node:").isEmpty(), "a heartbeat was left behind");
      }
    } finally {
      TestRedis.drop(prefix);
    }
  }
}
