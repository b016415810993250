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
    return new PgArchiveStore(vertx, TestDatabase.url(), table, io.conveyor.config.Config.ArchiveTls.DISABLED);
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
      stores.add(new PgArchiveStore(vertx, TestDatabase.url(), on, io.conveyor.config.Config.ArchiveTls.DISABLED));
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
    assertEquals(List.of("1 SQL", "2 SQL", "3 SQL", "4 SQL", "5 SQL", "6 SQL"), applied);
    assertEquals(12L, ((Number) TestDatabase.query("SELECT count(*) FROM information_schema.columns "
        + "WHERE table_schema = current_schema() AND table_name = '" + t + "'")).longValue());
    assertEquals(6L, ((Number) TestDatabase.query("SELECT count(*) FROM pg_indexes "
        + "WHERE schemaname = current_schema() AND tablename = '" + t + "'")).longValue());
  }

  @Test
  void the_nodes_role_cannot_prune_entries_younger_than_the_owners_floor_nor_delete_past_the_trigger() {
    long now = System.currentTimeMillis();
    store.appendAudit(List.of(audit(now - java.time.Duration.ofDays(2).toMillis(), "old", "POST /x", "ok"),
        audit(now - java.time.Duration.ofHours(1).toMillis(), "young", "POST /x", "ok"))).await();
    String role = table + "_node";
    TestDatabase.query("CREATE ROLE " + role + " NOLOGIN");
    try {
      // DELETE granted too (a careless grant): the trigger still refuses it outside the owner's prune
      TestDatabase.query("GRANT SELECT, INSERT, DELETE ON " + table + "_audit TO " + role);
      TestDatabase.query("GRANT EXECUTE ON FUNCTION " + table + "_audit_prune(timestamptz, integer) TO " + role);
      assertEquals(1, asRole(role, "SELECT " + table + "_audit_prune('infinity', 2147483647)"));
      Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
          () -> asRole(role, "SELECT set_config('conveyor.audit_prune', 'on', false)", "DELETE FROM " + table
              + "_audit"));
      org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("append-only"), e.getMessage());
      assertEquals(List.of("young"), store.audit(new AuditQuery(null, null, null, null, null, null, null, null, 10))
          .await().stream().map(io.conveyor.model.AuditEntry::keyId).toList());
    } finally {
      TestDatabase.query("DROP OWNED BY " + role);
      TestDatabase.query("DROP ROLE " + role);
    }
  }

  /** Runs the statements on one connection as that role; answers the last one's first value (or null). */
  private Object asRole(String role, String... statements) {
    io.vertx.sqlclient.Pool pool = io.vertx.pgclient.PgBuilder.pool()
        .connectingTo(io.vertx.pgclient.PgConnectOptions.fromUri(TestDatabase.url())).using(vertx).build();
    try {
      return pool.withConnection(c -> {
        Future<io.vertx.sqlclient.RowSet<io.vertx.sqlclient.Row>> f = c.query("SET ROLE " + role).execute();
        for (String st : statements) {
          f = f.compose(v -> c.query(st).execute());
        }
        return f.map(rows -> rows.size() == 0 ? null : rows.iterator().next().getValue(0));
      }).await();
    } finally {
      pool.close().await();
    }
  }
}
