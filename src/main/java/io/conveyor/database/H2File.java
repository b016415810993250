package io.conveyor.database;

import io.conveyor.time.Ticker;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.h2.api.ErrorCode;
import org.h2.jdbcx.JdbcDataSource;

/** The embedded archive's file: how it is opened, and its schema migrated once however many nodes open it. */
final class H2File {
  private final Path file;
  private final String table;

  H2File(Path file, String table) {
    this.file = file;
    this.table = table;
  }

  /**
   * Flyway under a row lock that the other stores on this file wait for. Flyway alone does not serialise H2
   * (H2ArchiveStoreTest, run without this lock, failed both ways): its lock is a row lock on its history table,
   * which H2 gives up when a migration's DDL commits (H2 commits around every DDL statement), so two nodes ran
   * V1 ("Table already exists"); and it decides whether to create or baseline its history before it locks, so
   * a node lost that race ("Unable to baseline … already exists, and is empty"). This lock is held on a
   * connection of its own that runs no DDL, through the whole decision and run. Through AUTO_SERVER every
   * process reaches the same database, so it holds across processes too.
   */
  void migrate() throws SQLException {
    try (Connection lock = DriverManager.getConnection(url(), "sa", ""); Statement s = lock.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS " + table + "_migration_lock (id INT PRIMARY KEY)");
      lock.setAutoCommit(false);
      // a node migrating a large file may take a while; the others wait for it, not H2's default second
      s.execute("SET LOCK_TIMEOUT " + java.util.concurrent.TimeUnit.MINUTES.toMillis(2));
      lockMigration(lock, s);
      ArchiveSchema.migrate(source(), "h2", table);
      lock.commit();
    }
  }

  /**
   * Locks the lock table's one row, inserting it if it is not there yet. SELECT … FOR UPDATE skips a row that
   * another node inserted and has not committed, so it returns at once, locking nothing. That happened when the
   * row came with CREATE TABLE … AS SELECT 1: H2 shows the new table to others before it inserts the row, so a
   * second node saw the table, locked no row and ran Flyway beside the first (two baselines at rank 1). An
   * INSERT of the same key does wait for the other node: either our own uncommitted row is then the lock, or
   * theirs has committed, the INSERT fails, and the row is there to lock.
   */
  private void lockMigration(Connection lock, Statement s) throws SQLException {
    while (true) {
      try (ResultSet row = s.executeQuery("SELECT id FROM " + table + "_migration_lock FOR UPDATE")) {
        if (row.next()) {
          return;
        }
      }
      try {
        s.executeUpdate("INSERT INTO " + table + "_migration_lock VALUES (1)");
        return;
      } catch (SQLException e) {
        // another node's row committed (or is committing) while we waited for it: lock that row instead
        if (e.getErrorCode() != ErrorCode.DUPLICATE_KEY_1 && e.getErrorCode() != ErrorCode.CONCURRENT_UPDATE_1) {
          throw e;
        }
        lock.rollback();
      }
    }
  }

  private String url() {
    // WRITE_DELAY=0: a commit reaches the file at once, not up to half a second later. The archive leader
    // deletes a transaction from Redis once its write committed; if the process serving the file died in
    // that half second (kill -9), the transaction would be in neither place
    return "jdbc:h2:file:" + file + ";AUTO_SERVER=TRUE;WRITE_DELAY=0";
  }

  /** Connections for Flyway; the file is open by now, so no lock-file race is left to retry. */
  private JdbcDataSource source() {
    JdbcDataSource source = new JdbcDataSource();
    source.setURL(url());
    source.setUser("sa");
    source.setPassword("");
    return source;
  }

  /**
   * Opens the file. Processes that start at the same moment race for H2's lock file (the loser hears "lock
   * file recently modified" or "another process was faster" until the winner's server is up), so such a
   * refusal is tried again for a while.
   */
  Connection connect() throws SQLException, InterruptedException {
    long giveUp = Ticker.SYSTEM.nanos() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
    while (true) {
      try {
        return DriverManager.getConnection(url(), "sa", "");
      } catch (SQLException e) {
        // 8000 covers "another process was faster" and lock-file races; 90020 is "already in use"
        boolean race = e.getErrorCode() == 8000 || e.getErrorCode() == 90020
            || String.valueOf(e.getMessage()).toLowerCase().contains("lock");
        if (Ticker.SYSTEM.nanos() - giveUp > 0 || !race) {
          throw e;
        }
        Thread.sleep(100 + java.util.concurrent.ThreadLocalRandom.current().nextInt(400));
      }
    }
  }
}
