package io.conveyor.database;

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
  static final String HISTORY_SUFFIX = "_schema_history";

  private ArchiveSchema() {
  }

  /** Brings the table to the newest version (Flyway opens its own connections from the source). */
  static void migrate(DataSource source, String dialect, String table) {
    MigrateResult result = Flyway.configure(ArchiveSchema.class.getClassLoader())
        .dataSource(source)
        .locations("classpath:db/archive/" + dialect)
        .table(table + HISTORY_SUFFIX)
        .placeholders(Map.of("table", table))
        // Flyway baselines a schema that holds tables but no history (other tables, or the migration lock's):
        // at 0, so that V1 still runs
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .load()
        .migrate();
    if (result.migrationsExecuted > 0) {
      log.info("archive table {}: applied {} schema migrations, now at version {}", table,
          result.migrationsExecuted, result.targetSchemaVersion);
    }
  }
}
