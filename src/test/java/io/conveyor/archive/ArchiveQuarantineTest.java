package io.conveyor.archive;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.redis.Code;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** One odd row never stops the archive: it is stored as it is, or, if the database refuses it, set aside. */
class ArchiveQuarantineTest {
  private static final String ORDER = "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'util/fixed-reply','params':{'reply':{'done':true}}}]}";
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private final String table = TestDatabase.newTable();
  private Path h2;
  private TestNode node;
  private String store;

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
    if ("postgresql".equals(store)) {
      TestDatabase.drop(table);
    }
  }

  private TestNode start(String on) throws Exception {
    store = on;
    TestNode n = new TestNode().clock(clock).set("ARCHIVE_INTERVAL", "50ms").set("ARCHIVE_TABLE", table)
        .pipeline("order", ORDER);
    if (on.equals("postgresql")) {
      n.set("ARCHIVE_URL", TestDatabase.url());
    } else {
      h2 = Files.createTempDirectory("quarantine").resolve("archive");
      n.set("ARCHIVE_URL", "h2:" + h2);
    }
    node = n.start(new TestSteps().registry());
    return node;
  }

  /** Runs SQL on the node's archive, around the node. */
  private void sql(String statement) throws Exception {
    if (store.equals("postgresql")) {
      TestDatabase.query(statement);
      return;
    }
    try (Connection c = DriverManager.getConnection("jdbc:h2:file:" + h2.toAbsolutePath() + ";AUTO_SERVER=TRUE",
        "sa", ""); var s = c.createStatement()) {
      s.execute(statement);
    }
  }

  private String finished(JsonObject start) {
    String txId = node.transactions.start(start.put("type", "order").put("owner", "acme")).await().txId();
    node.awaitFinal(txId);
    return txId;
  }

  private long inRedis(List<String> txIds) {
    return txIds.stream().filter(id -> cmd("EXISTS", node.keys.stateH(id)).toLong() == 1).count();
  }

  private void archivedAll(List<String> txIds) {
    Eventually.until(Duration.ofSeconds(60), "the archive to take " + txIds.size(), () -> inRedis(txIds),
        left -> left == 0);
  }

  private String quarantineH(String txId) {
    return node.keys.quarantineH(node.keys.partitionOf(txId));
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgresql", "h2"})
  void nul_in_external_id_input_metadata_and_a_key_name_archives_and_the_thousand_after_them_too(String on)
      throws Exception {
    start(on);
    List<String> odd = List.of(
        finished(new JsonObject().put("externalId", "plain-first").put("input", new JsonObject())),
        finished(new JsonObject().put("input", new JsonObject().put("text", "a\u0000b"))),
        finished(new JsonObject().put("metadata", new JsonObject().put("tag", "x\u0000y"))),
        finished(new JsonObject().put("input", new JsonObject().put("k\u0000ey", 1))));
    // the edge refuses control characters in identifiers: this one is arranged in Redis, NUL and all
    cmd("HSET", node.keys.stateH(odd.get(0)), "externalId", "nul-\u0000-id");
    List<JsonObject> before = new ArrayList<>();
    for (String id : odd) {
      before.add(node.transactions.status(id, "acme").await().toJson());
    }
    assertEquals("nul-\u0000-id", before.get(0).getString("externalId"));
    List<String> ordinary = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      ordinary.add(node.start("order", new JsonObject().put("i", i)));
    }
    for (String id : ordinary) {
      node.awaitFinal(id);
    }
    clock.advance(Duration.ofSeconds(61)); // past archive.delay
    List<String> all = new ArrayList<>(odd);
    all.addAll(ordinary);
    archivedAll(all);
    for (int i = 0; i < odd.size(); i++) {
      assertEquals(before.get(i), node.transactions.status(odd.get(i), "acme").await().toJson(), odd.get(i));
    }
    assertEquals(odd.get(0), node.node().archive().findByExternalId("acme", "nul-\u0000-id").await().txId());
    assertEquals(0, cmd("HLEN", quarantineH(odd.get(0))).toLong(), "nothing was set aside");
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgresql", "h2"})
  void a_row_the_database_refuses_is_set_aside_the_rest_archived_and_an_operator_retries_or_drops_it(String on)
      throws Exception {
    start(on);
    sql("ALTER TABLE " + table + " ADD CONSTRAINT " + table + "_no_poison CHECK (external_id IS NULL OR "
        + "external_id NOT LIKE 'poison%')");
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      ids.add(finished(new JsonObject().put("input", new JsonObject().put("i", i))));
    }
    String poison = finished(new JsonObject().put("externalId", "poison-1"));
    String doomed = finished(new JsonObject().put("externalId", "poison-2"));
    clock.advance(Duration.ofSeconds(61));
    archivedAll(ids);
    for (String bad : List.of(poison, doomed)) {
      Eventually.until(Duration.ofSeconds(20), bad + " set aside", () -> cmd("HEXISTS", quarantineH(bad), bad)
          .toLong(), n -> n == 1);
      int p = node.keys.partitionOf(bad);
      assertNotNull(cmd("ZSCORE", node.keys.exceptionZ(p), bad));
      assertNull(cmd("ZSCORE", node.keys.toArchiveZ(p), bad), "no longer due");
      JsonObject reason = new JsonObject(cmd("HGET", quarantineH(bad), bad).toString());
      assertTrue(reason.getString("sqlState").startsWith("23"), reason.encode());
      assertTrue(reason.getString("message").toLowerCase().contains("_no_poison"), reason.encode());
      assertTrue(cmd("LRANGE", node.keys.eventsL(p), 0, -1).toString().contains("archive-quarantined"));
    }
    // counted when the set-aside's reply reaches the leader, a moment after Redis shows it
    Eventually.until(Duration.ofSeconds(10), "both counted as quarantined", () -> {
      io.micrometer.core.instrument.Counter c = node.node().metrics().registry().find("conveyor.archive.quarantined")
          .counter();
      return c == null ? 0.0 : c.count();
    }, n -> n == 2.0);
    assertEquals(io.conveyor.model.TxStatus.SUCCESS, node.transactions.status(poison, "acme").await().status(),
        "a quarantined transaction still reads from Redis");

    sql("ALTER TABLE " + table + " DROP CONSTRAINT " + table + "_no_poison");
    assertEquals(Code.OK, node.store.quarantine.retry(poison, "test").await());
    archivedAll(List.of(poison));
    assertNotNull(node.node().archive().find(poison).await());
    assertEquals(Code.NOT_FOUND, node.store.quarantine.retry(poison, "test").await());

    assertEquals(Code.OK, node.store.quarantine.drop(doomed, "test").await());
    assertEquals(0, inRedis(List.of(doomed)));
    assertEquals(0, cmd("HLEN", quarantineH(doomed)).toLong());
    assertTrue(cmd("LRANGE", node.keys.eventsL(node.keys.partitionOf(doomed)), 0, -1).toString()
        .contains("archive-dropped"));
    assertNull(node.node().archive().find(doomed).await());
    assertEquals(Code.NOT_FOUND, node.store.quarantine.drop(doomed, "test").await());
  }

  @org.junit.jupiter.api.Test
  void a_row_a_postgresql_trigger_refuses_is_set_aside_with_its_message_and_the_batch_around_it_archived()
      throws Exception {
    start("postgresql");
    sql("CREATE FUNCTION " + table + "_refuse() RETURNS trigger AS $$ BEGIN IF NEW.external_id = 'refused' THEN "
        + "RAISE EXCEPTION 'the archive refuses %', NEW.tx_id; END IF; RETURN NEW; END $$ LANGUAGE plpgsql");
    sql("CREATE TRIGGER " + table + "_refuse BEFORE INSERT OR UPDATE ON " + table + " FOR EACH ROW EXECUTE FUNCTION "
        + table + "_refuse()");
    try {
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        ids.add(finished(new JsonObject().put("input", new JsonObject().put("i", i))));
      }
      String refused = finished(new JsonObject().put("externalId", "refused"));
      clock.advance(Duration.ofSeconds(61));
      archivedAll(ids);
      Eventually.until(Duration.ofSeconds(20), "the refused one set aside", () -> cmd("HEXISTS",
          quarantineH(refused), refused).toLong(), n -> n == 1);
      JsonObject reason = new JsonObject(cmd("HGET", quarantineH(refused), refused).toString());
      assertEquals("P0001", reason.getString("sqlState"));
      assertTrue(reason.getString("message").contains("the archive refuses " + refused), reason.encode());
      assertEquals(1, cmd("EXISTS", node.keys.stateH(refused)).toLong(), "kept in Redis");
    } finally {
      TestDatabase.query("DROP FUNCTION IF EXISTS " + table + "_refuse() CASCADE");
    }
  }
}
