package io.conveyor.database;

import io.conveyor.testing.TestDatabase;
import io.vertx.core.Vertx;

/** The archive contract on PostgreSQL. */
class PgArchiveStoreTest extends ArchiveStoreContract {
  private final String table = TestDatabase.newTable();

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
  }
}
