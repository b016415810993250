package io.conveyor.database;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
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
  protected void sql(String statement) throws SQLException {
    try (var c = connect(file); var s = c.createStatement()) {
      s.execute(statement);
    }
  }

  /** H2 calls no trigger on TRUNCATE (README, Audit log: the embedded file is not for production). */
  @Override
  protected boolean refusesTruncate() {
    return false;
  }

  @Override
  protected String auditTable() {
    return TABLE + "_audit";
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

  @Test
  void several_nodes_creating_the_same_file_at_once_all_succeed_and_each_version_runs_once() throws Exception {
    for (int round = 0; round < 5; round++) {
      Path fresh = newFile();
      openAtOnce(fresh, 6);
      // the schema holds the migration lock's table when Flyway first looks, so it starts from a baseline at 0
      assertEquals(List.of("0 BASELINE", "1 SQL", "2 SQL", "3 SQL", "4 SQL", "5 SQL"), history(fresh),
          "round " + round);
      assertEquals(COLUMNS, shape(fresh), "round " + round);
    }
  }

}
