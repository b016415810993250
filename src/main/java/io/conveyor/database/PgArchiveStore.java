package io.conveyor.database;

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
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;

/**
 * The archive in PostgreSQL (vertx-pg-client). A batch is one INSERT … SELECT FROM UNNEST(arrays) … ON
 * CONFLICT DO UPDATE: one statement and one round trip however many rows it carries.
 */
final class PgArchiveStore implements ArchiveStore {
  private final Vertx vertx;
  private final PgConnectOptions connect;
  private final String table;
  private final String upsert;
  private Pool pool;

  PgArchiveStore(Vertx vertx, String url, String table) {
    this.vertx = vertx;
    this.connect = PgConnectOptions.fromUri(url);
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

  /** Version 1 of the schema; a later version appends its statements as a new entry. */
  private List<List<String>> migrations() {
    return List.of(List.of(
        "CREATE TABLE " + table + " (tx_id text PRIMARY KEY, owner text NOT NULL, external_id text, "
            + "type text NOT NULL, status text NOT NULL, created timestamptz NOT NULL, completed timestamptz, "
            + "state jsonb NOT NULL, webhook jsonb, archived timestamptz NOT NULL)",
        "CREATE INDEX " + table + "_owner_external_id ON " + table + " (owner, external_id)",
        "CREATE INDEX " + table + "_completed ON " + table + " (completed)"),
        // 2: the state's stamp, so a late copy never replaces a newer one
        List.of("ALTER TABLE " + table + " ADD COLUMN state_updated bigint",
            "ALTER TABLE " + table + " ADD COLUMN state_rev bigint"));
  }

  @Override
  public Future<Void> open() {
    pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(4)).connectingTo(connect).using(vertx).build();
    // one node migrates at a time (an advisory lock on the table's name); the others find it done
    return pool.withTransaction(c -> c.query("SELECT pg_advisory_xact_lock(hashtext('conveyor:" + table + "'))")
        .execute()
        .compose(v -> c.query("SELECT to_regclass('" + table + "_schema')").execute())
        .compose(found -> found.iterator().next().getValue(0) != null ? Future.succeededFuture()
            : c.query("CREATE TABLE " + table + "_schema (version int NOT NULL)").execute())
        .compose(v -> c.query("SELECT max(version) FROM " + table + "_schema").execute())
        .compose(rows -> {
          Integer have = rows.iterator().next().getInteger(0);
          Future<Void> chain = Future.succeededFuture();
          List<List<String>> all = migrations();
          for (int v = have == null ? 0 : have; v < all.size(); v++) {
            int version = v + 1;
            for (String sql : all.get(v)) {
              chain = chain.compose(x -> c.query(sql).execute().mapEmpty());
            }
            chain = chain.compose(x -> c.query("INSERT INTO " + table + "_schema VALUES (" + version + ")")
                .execute().mapEmpty());
          }
          return chain;
        }));
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
      owners[i] = t.owner();
      externalIds[i] = t.externalId();
      types[i] = t.type();
      statuses[i] = t.status();
      created[i] = time(t.created());
      completed[i] = t.completed() == null ? null : time(t.completed());
      states[i] = t.state().encode();
      webhooks[i] = t.webhook() == null ? null : t.webhook().encode();
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
        .execute(Tuple.of(txId, webhook.encode())).map(r -> r.rowCount() == 1);
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
        .execute(Tuple.of(owner, externalId)).map(PgArchiveStore::first);
  }

  private static ArchivedTx first(RowSet<Row> rows) {
    if (rows.size() == 0) {
      return null;
    }
    Row r = rows.iterator().next();
    ArchivedTx t = ArchivedTx.fromState(r.getString(0), new JsonObject(r.getString(1)));
    String webhook = r.getString(2);
    return webhook == null ? t : new ArchivedTx(t.txId(), t.owner(), t.externalId(), t.type(), t.status(),
        t.created(), t.completed(), t.state(), new JsonObject(webhook));
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
