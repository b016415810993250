package io.conveyor.it;

import io.conveyor.ClientRoot;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.domain.Transactions;
import io.conveyor.config.ConfigLoader;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.NodeProcess;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestRedis;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
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
 * The archive leader dies between writing a batch to PostgreSQL and confirming it in Redis. The next leader
 * writes the batch again (an upsert: one row each), then confirms it and cleans Redis; nothing is lost.
 *
 * <p>Real processes only, no fault hook in the node: the test holds an advisory lock that a BEFORE INSERT
 * trigger on the table waits for, so the leader's upsert stops inside its execution. The test then pauses the
 * leader (SIGSTOP) and lets go: the server already holds the statement and its Sync, so it commits the upsert
 * although the client is paused and never hears of it. The rows are in PostgreSQL and still unconfirmed in
 * Redis when SIGKILL ends the leader. (LOCK TABLE does not do: vertx-pg-client prepares a statement in one
 * round trip and executes it in the next, and the prepare already waits for the table lock, so a paused
 * client never sends the statement.) The node that runs the transactions does not archive, so no other node
 * takes the batch over meanwhile; the next archive node starts once the leader is dead.
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
    TestDatabase.query("DROP FUNCTION IF EXISTS " + table + "_hold()");
  }

  private Map<String, String> env(Path pipelines, String roles) {
    Map<String, String> env = new HashMap<>(Map.of("CONVEYOR_REDIS_URL", TestRedis.url(), "CONVEYOR_REDIS_PREFIX", prefix,
        "CONVEYOR_CLUSTER_ENABLED", "false", "CONVEYOR_PIPELINES_DIR", pipelines.toString(), "CONVEYOR_HTTP_PORT", "0",
        "CONVEYOR_NODE_ROLES", roles, "CONVEYOR_ARCHIVE_URL", TestDatabase.url(), "CONVEYOR_ARCHIVE_TABLE", table,
        "CONVEYOR_ARCHIVE_DELAY", "0s", "CONVEYOR_ARCHIVE_LEASE", "1s"));
    env.put("CONVEYOR_ARCHIVE_GRACE", "500ms");
    env.put("CONVEYOR_ARCHIVE_INTERVAL", "200ms");
    // a batch handed to a leader is held for 2 × timeout + lease: the next leader sees it after 7 s, not 61 s
    env.put("CONVEYOR_ARCHIVE_TIMEOUT", "3s");
    return env;
  }

  private NodeProcess start(String name, Map<String, String> env) throws Exception {
    NodeProcess node = NodeProcess.start(name, env);
    nodes.add(node);
    return node;
  }

  /** The advisory lock the trigger waits for, one per test. */
  private String holdKey() {
    return "hashtext('" + table + ":hold')";
  }

  /** Makes every INSERT into the table wait, inside its execution, for the lock the test holds. */
  private void holdInserts(PgConnection holder) {
    holder.query("SELECT pg_advisory_lock(" + holdKey() + ")").execute().await();
    TestDatabase.query("CREATE FUNCTION " + table + "_hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        + "PERFORM pg_advisory_xact_lock(" + holdKey() + "); RETURN NULL; END $$");
    TestDatabase.query("CREATE TRIGGER " + table + "_hold BEFORE INSERT ON " + table
        + " FOR EACH STATEMENT EXECUTE FUNCTION " + table + "_hold()");
  }

  /** Upserts into the table that wait for the test's lock: the leader's, stopped in its execution. */
  private long upsertsHeld() {
    return ((Number) TestDatabase.query("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        + "AND wait_event = 'advisory' AND query LIKE 'INSERT INTO " + table + " %'")).longValue();
  }

  private List<String> archivedIds() {
    Object ids = TestDatabase.query("SELECT string_agg(tx_id, ',') FROM " + table);
    return ids == null ? List.of() : List.of(ids.toString().split(","));
  }

  @Test
  void a_leader_killed_between_write_and_confirmation_loses_nothing_and_archives_each_transaction_once()
      throws Exception {
    Path pipelines = Files.createTempDirectory("pipelines");
    Files.writeString(pipelines.resolve("order.json"), ("{'name':'order','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'done':true}}}]}").replace('\'', '"'));
    NodeProcess leader = start("archive-crash-leader", env(pipelines, "archive"));
    leader.awaitLine("leads archiving", Duration.ofSeconds(60)); // the archive is open: the table exists
    NodeProcess worker = start("archive-crash-worker", env(pipelines, "dequeue,api,reaper"));
    worker.awaitLine(" started: group master", Duration.ofSeconds(60));

    Vertx vertx = Vertx.vertx();
    try {
      Transactions tx = ClientRoot.transactions(vertx, ConfigLoader.load(null, env(pipelines, "api")));
      PgConnection holder = PgConnection.connect(vertx, PgConnectOptions.fromUri(TestDatabase.url())).await();
      holdInserts(holder);
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        ids.add(tx.start(new JsonObject().put("type", "order").put("owner", "acme").put("input", new JsonObject()))
            .await().txId());
      }
      Eventually.until(Duration.ofSeconds(30), "the leader's upsert to wait for the test's lock", this::upsertsHeld,
          n -> n > 0);
      leader.pause(); // every thread stopped: none takes the commit after the lock goes
      holder.close().await(); // ends the session, and with it the lock: the server goes on with the upsert

      List<String> written = Eventually.until(Duration.ofSeconds(30), "the paused leader's upsert to commit",
          this::archivedIds, rows -> !rows.isEmpty());
      for (String id : written) {
        assertTrue(ids.contains(id), id + " is one of this test's transactions");
        assertEquals(1L, TestRedis.cmd("EXISTS", prefix + "stateH:" + id).toLong(), id + " is still in Redis");
        assertNotNull(TestRedis.cmd("ZSCORE", prefix + "toArchiveZ", id), id + " is not yet confirmed");
      }
      System.out.printf("the paused leader's upsert committed %d of %d transactions%n", written.size(), ids.size());
      leader.kill();

      NodeProcess next = start("archive-crash-next", env(pipelines, "archive"));
      next.awaitLine("leads archiving", Duration.ofSeconds(60));
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
