package io.conveyor.database;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Map;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The archive table's schema, migrated by Flyway from the SQL under db/archive/&lt;dialect&gt;/, where ${table}
 * stands for archive.table. Each archive table has a history of its own, &lt;table&gt;_schema_history, so
 * several archives can share one database. Blocking (JDBC): callers run it on a worker thread, holding their
 * store's migration lock.
 */
final class ArchiveSchema {
  private static final Logger log = LoggerFactory.getLogger(ArchiveSchema.class);
  /** Where the hand-written migrations before Flyway recorded their version (one row per version). */
  static final String LEGACY_SUFFIX = "_schema";
  static final String HISTORY_SUFFIX = "_schema_history";

  private ArchiveSchema() {
  }

  /**
   * Brings the table to the newest version. The connection (the caller's, holding its lock) is used to look
   * for a legacy version table; Flyway opens its own connections from the source.
   */
  static void migrate(Connection connection, DataSource source, String dialect, String table) throws SQLException {
    int legacy = legacyVersion(connection, table);
    MigrateResult result = Flyway.configure(ArchiveSchema.class.getClassLoader())
        .dataSource(source)
        .locations("classpath:db/archive/" + dialect)
        .table(table + HISTORY_SUFFIX)
        .placeholders(Map.of("table", table))
        // Flyway baselines a schema that holds tables but no history: at the legacy version, so what the old
        // code applied is not run again, else at 0 (the schema holds other tables only) so that V1 still runs
        .baselineOnMigrate(true)
        .baselineVersion(Integer.toString(legacy))
        .baselineDescription(legacy == 0 ? "<< Flyway Baseline >>" : "applied before Flyway (" + table
            + LEGACY_SUFFIX + ")")
        .load()
        .migrate();
    if (result.migrationsExecuted > 0) {
      log.info("archive table {}: applied {} schema migrations, now at version {}", table,
          result.migrationsExecuted, result.targetSchemaVersion);
    }
  }

  /** The newest version in &lt;table&gt;_schema, or 0 when there is no such table. */
  static int legacyVersion(Connection connection, String table) throws SQLException {
    String legacy = table + LEGACY_SUFFIX;
    if (!exists(connection, legacy)) {
      return 0;
    }
    try (Statement s = connection.createStatement();
         ResultSet rs = s.executeQuery("SELECT COALESCE(MAX(version), 0) FROM " + legacy)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** Whether the connection's current schema holds a table of that (unquoted) name. */
  private static boolean exists(Connection connection, String name) throws SQLException {
    DatabaseMetaData meta = connection.getMetaData();
    // unquoted names are stored upper-case by H2 and lower-case by PostgreSQL; '_' is a wildcard here
    String stored = meta.storesUpperCaseIdentifiers() ? name.toUpperCase(Locale.ROOT) : name;
    String pattern = stored.replace("_", meta.getSearchStringEscape() + "_");
    try (ResultSet rs = meta.getTables(connection.getCatalog(), connection.getSchema(), pattern, null)) {
      return rs.next();
    }
  }
}
