package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.domain.Transactions;
import io.conveyor.config.ConfigLoader;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.NodeProcess;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestRedis;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The archive leader dies between writing a batch to PostgreSQL and confirming it in Redis (a fault makes
 * the process halt right there). The next leader writes the batch again (an upsert: one row each), then
 * confirms it and cleans Redis; nothing is lost.
 */
class ArchiveCrashIT {
  private final String prefix = TestRedis.newPrefix();
  private final String table = TestDatabase.newTable();
  private final List<NodeProcess> nodes = new ArrayList<>();

  @AfterEach
  void cleanUp() {
    nodes.forEach(NodeProcess::close);
    TestRedis.drop(prefix);
    TestDatabase.drop(table);
  }

  private Map<String, String> env(Path pipelines, String roles) {
    Map<String, String> env = new HashMap<>(Map.of("CONVEYOR_REDIS_URL", TestRedis.url(), "CONVEYOR_REDIS_PREFIX", prefix,
        "CONVEYOR_CLUSTER_ENABLED", "false", "CONVEYOR_PIPELINES_DIR", pipelines.toString(), "CONVEYOR_HTTP_PORT", "0",
        "CONVEYOR_NODE_ROLES", roles, "CONVEYOR_ARCHIVE_URL", TestDatabase.url(), "CONVEYOR_ARCHIVE_TABLE", table,
        "CONVEYOR_ARCHIVE_DELAY", "0s", "CONVEYOR_ARCHIVE_LEASE", "1s"));
    env.put("CONVEYOR_ARCHIVE_GRACE", "500ms");
    env.put("CONVEYOR_ARCHIVE_INTERVAL", "200ms");
    return env;
  }

  @Test
  void a_leader_killed_between_write_and_confirmation_loses_nothing_and_archives_each_transaction_once()
      throws Exception {
    Path pipelines = Files.createTempDirectory("pipelines");
    Files.writeString(pipelines.resolve("order.json"), ("{'name':'order','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'done':true}}}]}").replace('\'', '"'));
    Map<String, String> doomed = env(pipelines, "archive");
    doomed.put("JAVA_TOOL_OPTIONS", "-Dconveyor.fault.haltAfterArchiveWrite=true");
    NodeProcess leader = NodeProcess.start("archive-crash-leader", doomed);
    nodes.add(leader);
    leader.awaitLine("leads archiving", Duration.ofSeconds(60));
    NodeProcess next = NodeProcess.start("archive-crash-next", env(pipelines, "dequeue,api,reaper,archive"));
    nodes.add(next);
    next.awaitLine(" started: group master", Duration.ofSeconds(60));

    Vertx vertx = Vertx.vertx();
    try {
      Transactions tx = Transactions.client(vertx, ConfigLoader.load(null, env(pipelines, "api")));
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        ids.add(tx.start(new JsonObject().put("type", "order").put("owner", "acme").put("input", new JsonObject()))
            .await().txId());
      }
      assertEquals(99, leader.awaitExit(Duration.ofSeconds(30)), "the leader halted by the fault");
      assertTrue(leader.lines().stream().anyMatch(l -> l.contains("halting after writing")));
      next.awaitLine("leads archiving", Duration.ofSeconds(30));
      Eventually.until(Duration.ofSeconds(30), "the next leader to clean Redis", () -> ids.stream()
          .filter(id -> TestRedis.cmd("EXISTS", prefix + "stateH:" + id).toLong() == 1).count(), n -> n == 0);
      assertEquals(0L, TestRedis.cmd("ZCARD", prefix + "toArchiveZ").toLong());
      assertEquals(20L, ((Number) TestDatabase.query("SELECT count(*) FROM " + table)).longValue());
      assertEquals(20L, ((Number) TestDatabase.query("SELECT count(DISTINCT tx_id) FROM " + table)).longValue());
      for (String id : ids) {
        assertEquals("success", tx.status(id, "acme").await().status().wire());
      }
    } finally {
      vertx.close().await();
    }
  }
}
