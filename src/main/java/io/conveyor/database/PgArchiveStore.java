package io.conveyor.database;

import io.conveyor.config.Config;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The archive in PostgreSQL (vertx-pg-client). A batch is one INSERT … SELECT FROM UNNEST(arrays) … ON
 * CONFLICT DO UPDATE: one statement and one round trip however many rows it carries. The schema is migrated by
 * Flyway (ArchiveSchema) over JDBC at open, the one use of JDBC here.
 */
final class PgArchiveStore implements ArchiveStore {
  private final Vertx vertx;
  private final PgConnectOptions connect;
  private final Config.ArchiveTls tls;
  private final String table;
  private final String upsert;
  private Pool pool;

  /** A store reached with tls (security.archive.tls, resolved with the URL's sslmode by the config reader). */
  PgArchiveStore(Vertx vertx, String url, String table, Config.ArchiveTls tls) {
    this.vertx = vertx;
    this.connect = PgConnectOptions.fromUri(url);
    this.tls = tls;
    this.table = table;
    // a copy older than the row (a late retry) changes nothing; a webhook outcome recorded after archiving
    // is kept when a copy without one lands later
    this.upsert = "INSERT INTO " + table + " AS t (tx_id, owner, external_id, type, status, created, completed, "
        + "state, webhook, state_updated, state_rev, archived) SELECT u.*, now() FROM UNNEST($1::text[], "
        + "$2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[], "
        + "$8::text[]::jsonb[], $9::text[]::jsonb[], $10::bigint[], $11::bigint[]) AS u "
        + "ON CONFLICT (tx_id) DO UPDATE SET owner = EXCLUDED.owner, external_id = EXCLUDED.external_id, "
        + "type = EXCLUDED.type, status = EXCLUDED.status, created = EXCLUDED.created, "
        + "completed = EXCLUDED.completed, state = EXCLUDED.state, "
        + "webhook = COALESCE(EXCLUDED.webhook, t.webhook), state_updated = EXCLUDED.state_updated, "
        + "state_rev = EXCLUDED.state_rev, archived = EXCLUDED.archived "
        + "WHERE (EXCLUDED.state_updated, EXCLUDED.state_rev) >= (COALESCE(t.state_updated, 0), "
        + "COALESCE(t.state_rev, 0))";
  }

  /**
   * On a worker thread, reads the TLS files and migrates the schema (Flyway is JDBC); then opens the pool for reads
   * and writes and asks it once, so a certificate the pool refuses stops the start, not the first write.
   */
  @Override
  public Future<Void> open() {
    return vertx.executeBlocking(() -> {
      TlsToPostgres.apply(connect, tls);
      return migrate();
    }).compose(v -> {
      pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(4)).connectingTo(connect).using(vertx).build();
      return pool.query("SELECT 1").execute().<Void>mapEmpty();
    }).recover(e -> Future.failedFuture(TlsToPostgres.explain(e, tls)));
  }

  /**
   * Flyway under an advisory lock on the table's name. Flyway locks too, but only after it has decided
   * whether to create its history or to baseline a schema that holds tables, so nodes opening an empty
   * database at once may decide differently and one then fails (H2ArchiveStoreTest shows that race on H2,
   * where it is easy to hit); this lock makes the decision and the run one step. It is the key the
   * hand-written migration took, so a node of an older version migrating at the same moment waits as well.
   * Closing the session releases it.
   */
  private Void migrate() throws SQLException {
    PGSimpleDataSource jdbc = jdbc();
    try (Connection c = jdbc.getConnection(); Statement s = c.createStatement()) {
      s.execute("SELECT pg_advisory_lock(hashtext('conveyor:" + table + "'))");
      ArchiveSchema.migrate(jdbc, "postgresql", table);
    }
    return null;
  }

  /** The same server, user and database as the pool's, for JDBC. */
  private PGSimpleDataSource jdbc() {
    PGSimpleDataSource jdbc = new PGSimpleDataSource();
    jdbc.setServerNames(new String[] {connect.getHost()});
    jdbc.setPortNumbers(new int[] {connect.getPort()});
    jdbc.setDatabaseName(connect.getDatabase());
    jdbc.setUser(connect.getUser());
    jdbc.setPassword(connect.getPassword());
    TlsToPostgres.apply(jdbc, tls);
    jdbc.setApplicationName("conveyor archive migration");
    return jdbc;
  }

  @Override
  public Future<Void> write(List<ArchivedTx> batch) {
    if (batch.isEmpty()) {
      return Future.succeededFuture();
    }
    int n = batch.size();
    String[] ids = new String[n];
    String[] owners = new String[n];
    String[] externalIds = new String[n];
    String[] types = new String[n];
    String[] statuses = new String[n];
    OffsetDateTime[] created = new OffsetDateTime[n];
    OffsetDateTime[] completed = new OffsetDateTime[n];
    String[] states = new String[n];
    String[] webhooks = new String[n];
    Long[] stampUpdated = new Long[n];
    Long[] stampRev = new Long[n];
    for (int i = 0; i < n; i++) {
      ArchivedTx t = batch.get(i);
      ids[i] = t.txId();
      owners[i] = NulSafe.column(t.owner());
      externalIds[i] = NulSafe.column(t.externalId());
      types[i] = NulSafe.column(t.type());
      statuses[i] = NulSafe.column(t.status());
      created[i] = time(t.created());
      completed[i] = t.completed() == null ? null : time(t.completed());
      states[i] = NulSafe.text(t.state());
      webhooks[i] = NulSafe.text(t.webhook());
      stampUpdated[i] = t.stampUpdated();
      stampRev[i] = t.stampRev();
    }
    return pool.preparedQuery(upsert).execute(Tuple.tuple(List.of(ids, owners, externalIds, types, statuses, created,
        completed, states, webhooks, stampUpdated, stampRev))).mapEmpty();
  }

  private static OffsetDateTime time(long millis) {
    return Instant.ofEpochMilli(millis).atOffset(ZoneOffset.UTC);
  }

  @Override
  public Future<Boolean> updateWebhook(String txId, JsonObject webhook) {
    return pool.preparedQuery("UPDATE " + table + " SET webhook = $2::text::jsonb WHERE tx_id = $1")
        .execute(Tuple.of(txId, NulSafe.text(webhook))).map(r -> r.rowCount() == 1);
  }

  @Override
  public Future<ArchivedTx> find(String txId) {
    return pool.preparedQuery("SELECT tx_id, state::text, webhook::text FROM " + table + " WHERE tx_id = $1")
        .execute(Tuple.of(txId)).map(PgArchiveStore::first);
  }

  @Override
  public Future<ArchivedTx> findByExternalId(String owner, String externalId) {
    return pool.preparedQuery("SELECT tx_id, state::text, webhook::text FROM " + table
            + " WHERE owner = $1 AND external_id = $2 ORDER BY created DESC LIMIT 1")
        .execute(Tuple.of(NulSafe.column(owner), NulSafe.column(externalId))).map(PgArchiveStore::first);
  }

  @Override
  public Future<java.util.List<String>> ended(String type, String status, long from, long to, int limit) {
    return pool.preparedQuery("SELECT tx_id FROM " + table + " WHERE type = $1 AND status = $2 AND completed >= $3"
            + " AND completed < $4 ORDER BY completed LIMIT $5")
        .execute(Tuple.of(NulSafe.column(type), NulSafe.column(status), ArchiveStore.timestamp(from), ArchiveStore.timestamp(to), limit)).map(rows -> {
          java.util.List<String> ids = new java.util.ArrayList<>();
          rows.forEach(r -> ids.add(r.getString(0)));
          return ids;
        });
  }

  @Override
  public Future<Found> search(ArchiveQuery q) {
    StringBuilder where = new StringBuilder(" WHERE true");
    java.util.List<Object> params = new java.util.ArrayList<>();
    q.whereCommon(where, params, n -> "$" + n);
    if (q.beforeCreated() != null) {
      params.add(ArchiveStore.timestamp(q.beforeCreated()));
      params.add(q.beforeTx());
      where.append(" AND (created, tx_id) < ($").append(params.size() - 1).append(", $").append(params.size())
          .append(")");
    }
    if (q.text() != null) {
      params.add(NulSafe.column(q.likePattern()));
      where.append(" AND lower(").append(ArchiveQuery.searchableSql("state->>'metadata'")).append(") LIKE $")
          .append(params.size());
    }
    // each status by equality, in a branch of its own: only so does a generic plan walk (type, status, created)
    // in order; with status = ANY it took the created index and, for a pipeline with no such status, read every
    // row (400 ms a page at 1,000,000 rows). The branches' pages merge below.
    List<String> statuses = q.statuses() == null || q.statuses().isEmpty() ? java.util.Collections.singletonList(null)
        : q.statuses();
    int limit = params.size() + (int) statuses.stream().filter(java.util.Objects::nonNull).count() + 1;
    String order = " ORDER BY created DESC, tx_id DESC LIMIT $" + limit;
    StringBuilder sql = new StringBuilder("SELECT tx_id, state, webhook FROM (");
    for (int i = 0; i < statuses.size(); i++) {
      sql.append(i == 0 ? "(" : " UNION ALL (").append("SELECT tx_id, created, state::text AS state, webhook::text")
          .append(" AS webhook FROM ").append(table).append(where);
      if (statuses.get(i) != null) {
        sql.append(" AND status = $").append(params.size() + i + 1);
      }
      sql.append(order).append(")");
    }
    sql.append(") page").append(order);
    statuses.stream().filter(java.util.Objects::nonNull).forEach(params::add);
    params.add(q.limit());
    return pool.preparedQuery(sql.toString()).execute(Tuple.from(params)).map(rows -> {
      java.util.List<ArchivedTx> out = new java.util.ArrayList<>();
      for (Row r : rows) {
        out.add(NulSafe.read(r.getString(0), r.getString(1), r.getString(2)));
      }
      ArchivedTx last = out.isEmpty() ? null : out.get(out.size() - 1);
      return new Found(out, out.size(), last == null ? 0 : last.created(), last == null ? null : last.txId());
    });
  }

  @Override
  public Future<Integer> deleteCompletedBefore(long before, int limit) {
    return pool.preparedQuery("DELETE FROM " + table + " WHERE tx_id IN (SELECT tx_id FROM " + table
            + " WHERE completed < $1 ORDER BY completed LIMIT $2)")
        .execute(Tuple.of(ArchiveStore.timestamp(before), limit)).map(RowSet::rowCount);
  }

  @Override
  public Future<Void> appendAudit(List<io.conveyor.model.AuditEntry> entries, List<String> streamIds) {
    if (entries.isEmpty()) {
      return Future.succeededFuture();
    }
    List<Tuple> rows = new java.util.ArrayList<>();
    for (int i = 0; i < entries.size(); i++) {
      rows.add(Tuple.from(AuditRows.values(entries.get(i))).addString(streamIds.get(i)));
    }
    return pool.preparedQuery("INSERT INTO " + table + "_audit (" + AuditRows.COLUMNS + ", stream_id) VALUES ($1, $2, "
        + "$3, $4, $5, $6, $7, $8, $9, $10, $11, $12::text::jsonb, $13) ON CONFLICT (stream_id) DO NOTHING")
        .executeBatch(rows).mapEmpty();
  }

  @Override
  public Future<List<io.conveyor.model.AuditEntry>> audit(AuditQuery q) {
    List<Object> params = new java.util.ArrayList<>();
    String where = q.where(params, n -> "$" + n);
    return pool.preparedQuery("SELECT id, " + AuditRows.COLUMNS.replace("params", "params::text") + " FROM " + table
        + "_audit" + where).execute(Tuple.from(params)).map(rows -> {
          List<io.conveyor.model.AuditEntry> out = new java.util.ArrayList<>();
          for (Row r : rows) {
            out.add(new io.conveyor.model.AuditEntry(r.getLong(0), r.getOffsetDateTime(1).toInstant().toEpochMilli(),
                r.getString(2), r.getString(3), r.getString(4), r.getString(5), r.getString(6), r.getInteger(7),
                r.getString(8), r.getString(9), r.getString(10), r.getString(11), new JsonObject(r.getString(12))));
          }
          return out;
        });
  }

  /** Through the table's prune function: the trigger refuses any other DELETE (V4__audit.sql). */
  @Override
  public Future<Integer> pruneAuditBefore(long before, int limit) {
    return pool.preparedQuery("SELECT " + table + "_audit_prune($1, $2)")
        .execute(Tuple.of(ArchiveStore.timestamp(before), limit)).map(rows -> rows.iterator().next().getInteger(0));
  }

  private static ArchivedTx first(RowSet<Row> rows) {
    if (rows.size() == 0) {
      return null;
    }
    Row r = rows.iterator().next();
    return NulSafe.read(r.getString(0), r.getString(1), r.getString(2));
  }

  @Override
  public Future<Void> close() {
    return pool == null ? Future.succeededFuture() : pool.close();
  }

  @Override
  public String describe() {
    return "PostgreSQL " + connect.getHost() + ":" + connect.getPort() + "/" + connect.getDatabase() + " table "
        + table;
  }
}
