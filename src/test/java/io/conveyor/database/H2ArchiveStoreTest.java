package io.conveyor.database;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The archive contract on the embedded H2 file, and its schema's migration by Flyway. */
class H2ArchiveStoreTest extends ArchiveStoreContract {
  private static final String TABLE = "conveyor_transactions";
  /** The archive table's columns and index count at the newest version (shape()). */
  private static final String COLUMNS = "TX_ID,OWNER,EXTERNAL_ID,TYPE,STATUS,CREATED,COMPLETED,STATE,WEBHOOK,"
      + "ARCHIVED,STATE_UPDATED,STATE_REV / 6 indexes";
  private final Path file;

  H2ArchiveStoreTest() throws Exception {
    file = newFile();
  }

  private static Path newFile() throws Exception {
    return Files.createTempDirectory("archive").resolve("archive");
  }

  @Override
  protected ArchiveStore newStore(Vertx vertx) {
    return new H2ArchiveStore(vertx, file, TABLE);
  }

  @Override
  protected ArchiveStore sameStore(Vertx vertx) {
    return newStore(vertx);
  }

  /** The file as another process would open it (AUTO_SERVER, as the store does). */
  private static Connection connect(Path on) throws SQLException {
    return DriverManager.getConnection("jdbc:h2:file:" + on.toAbsolutePath() + ";AUTO_SERVER=TRUE", "sa", "");
  }

  @Override
  protected long rows(String txId) {
    try (var c = connect(file);
         var p = c.prepareStatement("SELECT count(*) FROM " + TABLE + " WHERE tx_id = ?")) {
      p.setString(1, txId);
      try (ResultSet rs = p.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Opens that many stores on one file at the same moment, each on its own thread, and closes them. */
  private void openAtOnce(Path on, int count) {
    List<ArchiveStore> stores = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      stores.add(new H2ArchiveStore(vertx, on, TABLE));
    }
    try {
      Future.all(stores.stream().map(ArchiveStore::open).toList()).await();
    } finally {
      stores.forEach(s -> s.close().await());
    }
  }

  /** The versions in Flyway's history (its names are quoted lower case), one "version type" per entry. */
  private static List<String> history(Path on) throws SQLException {
    List<String> entries = new ArrayList<>();
    try (Connection c = connect(on); Statement s = c.createStatement();
         ResultSet rs = s.executeQuery("SELECT \"version\", \"type\", \"success\" FROM \"" + TABLE
             + "_schema_history\" ORDER BY \"installed_rank\"")) {
      while (rs.next()) {
        if (rs.getString(1) == null) {
          continue; // Flyway's marker for the history table's creation
        }
        entries.add(rs.getString(1) + " " + rs.getString(2) + (rs.getBoolean(3) ? "" : " FAILED"));
      }
    }
    return entries;
  }

  /** The columns and indexes of the archive table, as H2 names them. */
  private static String shape(Path on) throws SQLException {
    try (Connection c = connect(on); Statement s = c.createStatement();
         ResultSet rs = s.executeQuery("SELECT (SELECT LISTAGG(COLUMN_NAME, ',') WITHIN GROUP (ORDER BY "
             + "ORDINAL_POSITION) FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'CONVEYOR_TRANSACTIONS'), "
             + "(SELECT COUNT(*) FROM INFORMATION_SCHEMA.INDEXES WHERE TABLE_NAME = 'CONVEYOR_TRANSACTIONS')")) {
      rs.next();
      return rs.getString(1) + " / " + rs.getInt(2) + " indexes";
    }
  }

  /** The table as the hand-written migration left it at that version, with one archived row. */
  private static void createTheOldWay(Path on, int version, ArchivedTx row) throws SQLException {
    try (Connection c = connect(on); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE " + TABLE + "_schema (version INT NOT NULL)");
      s.execute("CREATE TABLE " + TABLE + " (tx_id VARCHAR(64) PRIMARY KEY, owner VARCHAR(1024) NOT NULL, "
          + "external_id VARCHAR(4096), type VARCHAR(1024) NOT NULL, status VARCHAR(32) NOT NULL, "
          + "created TIMESTAMP WITH TIME ZONE NOT NULL, completed TIMESTAMP WITH TIME ZONE, "
          + "state CHARACTER LARGE OBJECT NOT NULL, webhook CHARACTER LARGE OBJECT, "
          + "archived TIMESTAMP WITH TIME ZONE NOT NULL)");
      s.execute("CREATE INDEX " + TABLE + "_owner_external_id ON " + TABLE + " (owner, external_id)");
      s.execute("CREATE INDEX " + TABLE + "_completed ON " + TABLE + " (completed)");
      s.execute("INSERT INTO " + TABLE + "_schema VALUES (1)");
      if (version == 2) {
        s.execute("ALTER TABLE " + TABLE + " ADD COLUMN state_updated BIGINT");
        s.execute("ALTER TABLE " + TABLE + " ADD COLUMN state_rev BIGINT");
        s.execute("INSERT INTO " + TABLE + "_schema VALUES (2)");
      }
      try (PreparedStatement p = c.prepareStatement("INSERT INTO " + TABLE + " (tx_id, owner, external_id, type, "
          + "status, created, completed, state, archived) VALUES (?, 'acme', 'legacy-1', 'order', 'success', "
          + "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, ?, CURRENT_TIMESTAMP)")) {
        p.setString(1, row.txId());
        p.setString(2, row.state().encode());
        p.executeUpdate();
      }
    }
  }

  @Test
  void several_nodes_creating_the_same_file_at_once_all_succeed_and_each_version_runs_once() throws Exception {
    for (int round = 0; round < 5; round++) {
      Path fresh = newFile();
      openAtOnce(fresh, 6);
      // the schema holds the migration lock's table when Flyway first looks, so it starts from a baseline at 0
      assertEquals(List.of("0 BASELINE", "1 SQL", "2 SQL", "3 SQL"), history(fresh), "round " + round);
      assertEquals(COLUMNS, shape(fresh), "round " + round);
    }
  }

  @Test
  void an_archive_migrated_before_flyway_keeps_its_rows_and_its_history_starts_at_the_recorded_version()
      throws Exception {
    Path old = newFile();
    ArchivedTx row = tx("acme", "legacy-1", 1_800_000_000_000L, "success", new JsonObject().put("old", true));
    createTheOldWay(old, 2, row);
    openAtOnce(old, 4);
    assertEquals(List.of("2 BASELINE", "3 SQL"), history(old), "baselined at 2: only the versions after it run");
    assertEquals(COLUMNS, shape(old));
    ArchiveStore opened = new H2ArchiveStore(vertx, old, TABLE);
    opened.open().await();
    assertEquals(row, opened.find(row.txId()).await());
    assertEquals(row.txId(), opened.findByExternalId("acme", "legacy-1").await().txId());
    opened.close().await();
  }

  @Test
  void an_archive_left_at_version_1_before_flyway_gets_the_state_stamp_and_keeps_its_rows() throws Exception {
    Path old = newFile();
    ArchivedTx row = tx("acme", "legacy-1", 1_800_000_000_000L, "success", new JsonObject().put("old", true));
    createTheOldWay(old, 1, row);
    openAtOnce(old, 4);
    assertEquals(List.of("1 BASELINE", "2 SQL", "3 SQL"), history(old));
    assertEquals(COLUMNS, shape(old));
    ArchiveStore opened = new H2ArchiveStore(vertx, old, TABLE);
    opened.open().await();
    assertEquals(row, opened.find(row.txId()).await());
    // the stamp is there: a newer copy replaces the row, the older one landing late changes nothing
    JsonObject newer = row.state().copy().put("rev", "1").put("output", "{\"n\":2}");
    opened.write(List.of(ArchivedTx.fromState(row.txId(), newer))).await();
    opened.write(List.of(row)).await();
    assertEquals(newer, opened.find(row.txId()).await().state());
    opened.close().await();
  }
}
