package io.conveyor.database;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.testing.TestDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
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
  protected void sql(String statement) {
    io.conveyor.testing.TestDatabase.query(statement);
  }

  @Override
  protected String auditTable() {
    return table + "_audit";
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

  @Test
  void several_nodes_creating_the_same_archive_at_once_all_succeed_and_each_version_runs_once() {
    String t = anotherTable();
    openAtOnce(t, 6);
    List<String> applied = history(t).stream().filter(e -> !e.endsWith("BASELINE")).toList();
    assertEquals(List.of("1 SQL", "2 SQL", "3 SQL", "4 SQL"), applied);
    assertEquals(12L, ((Number) TestDatabase.query("SELECT count(*) FROM information_schema.columns "
        + "WHERE table_schema = current_schema() AND table_name = '" + t + "'")).longValue());
    assertEquals(6L, ((Number) TestDatabase.query("SELECT count(*) FROM pg_indexes "
        + "WHERE schemaname = current_schema() AND tablename = '" + t + "'")).longValue());
  }
}
