package io.conveyor.testing;

import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The PostgreSQL the tests use: CONVEYOR_TEST_PG_URL, else the local server's database test. There is no
 * embedded PostgreSQL: without one, these tests fail and say where they looked (.ci/run starts the local one).
 * Each test gets a table of its own and drops it.
 */
public final class TestDatabase {
  private TestDatabase() {
  }

  public static String url() {
    String env = System.getenv("CONVEYOR_TEST_PG_URL");
    return env != null && !env.isBlank() ? env : "postgresql://postgres@127.0.0.1:5432/test";
  }

  /** The same database through another host and port (a proxy in front of it). */
  public static String urlVia(int port) {
    PgConnectOptions o = PgConnectOptions.fromUri(url());
    return "postgresql://" + o.getUser() + "@127.0.0.1:" + port + "/" + o.getDatabase();
  }

  public static int port() {
    return PgConnectOptions.fromUri(url()).getPort();
  }

  public static String newTable() {
    byte[] b = new byte[5];
    ThreadLocalRandom.current().nextBytes(b);
    return "test_" + HexFormat.of().formatHex(b);
  }

  /** Runs one statement and answers the first column of the first row (or null). */
  public static Object query(String sql) {
    Vertx vertx = Vertx.vertx();
    try {
      Pool pool = PgBuilder.pool().connectingTo(PgConnectOptions.fromUri(url())).using(vertx).build();
      try {
        var rows = pool.query(sql).execute().await();
        return rows.size() == 0 || rows.columnsNames() == null ? null : rows.iterator().next().getValue(0);
      } catch (RuntimeException e) {
        throw new IllegalStateException("PostgreSQL at " + url() + " (set CONVEYOR_TEST_PG_URL): " + e.getMessage(), e);
      } finally {
        pool.close().await();
      }
    } finally {
      vertx.close().await();
    }
  }

  /** Drops the table, its Flyway history and the version table of the migrations before Flyway. */
  public static void drop(String table) {
    query("DROP TABLE IF EXISTS " + table + ", " + table + "_audit, " + table + "_audit_floor, " + table + "_schema_history, " + table
        + "_schema");
    query("DROP FUNCTION IF EXISTS " + table + "_audit_prune, " + table + "_audit_refuse");
  }
}
