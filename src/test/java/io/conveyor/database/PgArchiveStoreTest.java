package io.conveyor.database;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.testing.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The archive contract on PostgreSQL, and its schema's migration by Flyway. */
class PgArchiveStoreTest extends ArchiveStoreContract {
  private final String table = TestDatabase.newTable();
  private final List<String> moreTables = new ArrayList<>();

  @Override
  protected ArchiveStore newStore(Vertx vertx) {
    return new PgArchiveStore(vertx, TestDatabase.url(), table);
  }

  @Override
  protected ArchiveStore sameStore(Vertx vertx) {
    return newStore(vertx);
  }

  @Override
  protected long rows(String txId) {
    return ((Number) TestDatabase.query("SELECT count(*) FROM " + table + " WHERE tx_id = '" + txId + "'"))
        .longValue();
  }

  @Override
  protected void cleanUp() {
    TestDatabase.drop(table);
    moreTables.forEach(TestDatabase::drop);
  }

  private String anotherTable() {
    String t = TestDatabase.newTable();
    moreTables.add(t);
    return t;
  }

  /** Opens that many stores on one table at the same moment, as nodes starting together do, and closes them. */
  private void openAtOnce(String on, int count) {
    List<ArchiveStore> stores = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      stores.add(new PgArchiveStore(vertx, TestDatabase.url(), on));
    }
    try {
      Future.all(stores.stream().map(ArchiveStore::open).toList()).await();
    } finally {
      stores.forEach(s -> s.close().await());
    }
  }

  /** The history Flyway keeps for a table, one "version type" per entry, failed entries marked. */
  private static List<String> history(String of) {
    Object rows = TestDatabase.query("SELECT string_agg(version || ' ' || type || CASE WHEN success THEN '' "
        + "ELSE ' FAILED' END, ',' ORDER BY installed_rank) FROM " + of + "_schema_history");
    return List.of(String.valueOf(rows).split(","));
  }

  /** The table as the hand-written migration left it at that version, with one archived row. */
  private static void createTheOldWay(String t, int version, ArchivedTx row) {
    TestDatabase.query("CREATE TABLE " + t + " (tx_id text PRIMARY KEY, owner text NOT NULL, external_id text, "
        + "type text NOT NULL, status text NOT NULL, created timestamptz NOT NULL, completed timestamptz, "
        + "state jsonb NOT NULL, webhook jsonb, archived timestamptz NOT NULL); "
        + "CREATE INDEX " + t + "_owner_external_id ON " + t + " (owner, external_id); "
        + "CREATE INDEX " + t + "_completed ON " + t + " (completed); "
        + "CREATE TABLE " + t + "_schema (version int NOT NULL); INSERT INTO " + t + "_schema VALUES (1)");
    if (version == 2) {
      TestDatabase.query("ALTER TABLE " + t + " ADD COLUMN state_updated bigint; ALTER TABLE " + t
          + " ADD COLUMN state_rev bigint; INSERT INTO " + t + "_schema VALUES (2)");
    }
    TestDatabase.query("INSERT INTO " + t + " (tx_id, owner, external_id, type, status, created, completed, state, "
        + "archived) VALUES ('" + row.txId() + "', 'acme', 'legacy-1', 'order', 'success', now(), now(), '"
        + row.state().encode().replace("'", "''") + "'::jsonb, now())");
  }

  @Test
  void an_archive_migrated_before_flyway_keeps_its_rows_and_its_history_starts_at_the_recorded_version() {
    String t = anotherTable();
    ArchivedTx old = tx("acme", "legacy-1", 1_800_000_000_000L, "success", new JsonObject().put("old", true));
    createTheOldWay(t, 2, old);
    openAtOnce(t, 4);
    assertEquals(List.of("2 BASELINE", "3 SQL"), history(t), "baselined at 2: only the versions after it run");
    ArchiveStore opened = new PgArchiveStore(vertx, TestDatabase.url(), t);
    opened.open().await();
    assertEquals(old, opened.find(old.txId()).await());
    assertEquals(old.txId(), opened.findByExternalId("acme", "legacy-1").await().txId());
    opened.close().await();
  }

  @Test
  void an_archive_left_at_version_1_before_flyway_gets_the_state_stamp_and_keeps_its_rows() {
    String t = anotherTable();
    ArchivedTx old = tx("acme", "legacy-1", 1_800_000_000_000L, "success", new JsonObject().put("old", true));
    createTheOldWay(t, 1, old);
    openAtOnce(t, 4);
    assertEquals(List.of("1 BASELINE", "2 SQL", "3 SQL"), history(t));
    ArchiveStore opened = new PgArchiveStore(vertx, TestDatabase.url(), t);
    opened.open().await();
    assertEquals(old, opened.find(old.txId()).await());
    // the stamp is there: a newer copy replaces the row, the older one landing late changes nothing
    JsonObject newer = old.state().copy().put("rev", "1").put("output", "{\"n\":2}");
    opened.write(List.of(ArchivedTx.fromState(old.txId(), newer))).await();
    opened.write(List.of(old)).await();
    assertEquals(newer, opened.find(old.txId()).await().state());
    opened.close().await();
  }

  @Test
  void several_nodes_creating_the_same_archive_at_once_all_succeed_and_each_version_runs_once() {
    String t = anotherTable();
    openAtOnce(t, 6);
    List<String> applied = history(t).stream().filter(e -> !e.endsWith("BASELINE")).toList();
    assertEquals(List.of("1 SQL", "2 SQL", "3 SQL"), applied);
    assertEquals(12L, ((Number) TestDatabase.query("SELECT count(*) FROM information_schema.columns "
        + "WHERE table_schema = current_schema() AND table_name = '" + t + "'")).longValue());
    assertEquals(6L, ((Number) TestDatabase.query("SELECT count(*) FROM pg_indexes "
        + "WHERE schemaname = current_schema() AND tablename = '" + t + "'")).longValue());
  }
}
