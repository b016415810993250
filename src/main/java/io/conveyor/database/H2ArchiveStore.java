package io.conveyor.database;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * The embedded archive: an H2 database file (the default when archive.url is empty). JDBC blocks, so every
 * call runs on one worker thread of its own, in order. AUTO_SERVER lets other processes on this machine (a
 * second node, the shell client) open the same file. The schema is migrated by Flyway (ArchiveSchema) at open.
 */
final class H2ArchiveStore implements ArchiveStore {
  static {
    // AUTO_SERVER's TCP server is for nodes on this machine: it binds 127.0.0.1, not every interface (H2 reads
    // the property once, when its first class loads; an operator's own -Dh2.bindAddress wins)
    if (System.getProperty("h2.bindAddress") == null) {
      System.setProperty("h2.bindAddress", "127.0.0.1");
    }
  }

  private final Vertx vertx;
  private final Path file;
  private final String table;
  private final H2File h2;
  private final java.util.concurrent.ExecutorService executor = java.util.concurrent.Executors
      .newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "conveyor-archive-h2");
        t.setDaemon(true);
        return t;
      });
  private Connection connection;
  /** Set once open() has migrated the file: from then on a lost connection is opened again on demand. */
  private volatile boolean opened;

  H2ArchiveStore(Vertx vertx, Path file, String table) {
    this.vertx = vertx;
    this.file = file.toAbsolutePath();
    this.table = table;
    this.h2 = new H2File(this.file, table);
  }

  /**
   * Runs JDBC work on the store's own thread and answers on the caller's Vert.x context. Several nodes share
   * the file through the server of the process that opened it first; when that process dies, the others'
   * connections break. A connection found broken after a failure is dropped, and the next call opens the
   * file again (one of them then hosts the server), so a node recovers by itself instead of answering
   * "Database is already closed" for ever.
   */
  private <T> Future<T> blocking(Callable<T> work) {
    io.vertx.core.Context ctx = vertx.getOrCreateContext();
    io.vertx.core.Promise<T> answer = io.vertx.core.Promise.promise();
    executor.execute(() -> {
      try {
        if (opened && connection == null) {
          connection = h2.connect();
          connection.setAutoCommit(false);
        }
        T result = work.call();
        ctx.runOnContext(v -> answer.complete(result));
      } catch (Throwable e) {
        dropIfBroken();
        ctx.runOnContext(v -> answer.fail(e));
      }
    });
    return answer.future();
  }

  private void dropIfBroken() {
    if (!opened || connection == null) {
      return;
    }
    try {
      if (connection.isValid(2)) {
        return;
      }
    } catch (SQLException e) {
      // not valid either
    }
    try {
      connection.close();
    } catch (SQLException e) {
      // it is broken already
    }
    connection = null;
  }

  @Override
  public Future<Void> open() {
    return blocking(() -> {
      java.nio.file.Files.createDirectories(file.getParent());
      connection = h2.connect();
      h2.migrate();
      connection.setAutoCommit(false);
      opened = true;
      return null;
    });
  }


  @Override
  public Future<Void> write(List<ArchivedTx> batch) {
    if (batch.isEmpty()) {
      return Future.succeededFuture();
    }
    return blocking(() -> {
      // as in PostgreSQL: an older copy changes nothing, and a recorded webhook outcome is kept
      try (PreparedStatement p = connection.prepareStatement("MERGE INTO " + table + " t USING (VALUES (CAST(? AS "
          + "VARCHAR), CAST(? AS VARCHAR), CAST(? AS VARCHAR), CAST(? AS VARCHAR), CAST(? AS VARCHAR), "
          + "CAST(? AS TIMESTAMP WITH TIME ZONE), CAST(? AS TIMESTAMP WITH TIME ZONE), CAST(? AS CHARACTER LARGE "
          + "OBJECT), CAST(? AS CHARACTER LARGE OBJECT), CAST(? AS BIGINT), CAST(? AS BIGINT))) "
          + "s(tx_id, owner, external_id, type, status, created, completed, state, webhook, state_updated, state_rev) "
          + "ON t.tx_id = s.tx_id "
          + "WHEN MATCHED AND (s.state_updated > COALESCE(t.state_updated, 0) OR (s.state_updated = "
          + "COALESCE(t.state_updated, 0) AND s.state_rev >= COALESCE(t.state_rev, 0))) THEN UPDATE SET "
          + "owner = s.owner, external_id = s.external_id, type = s.type, status = s.status, created = s.created, "
          + "completed = s.completed, state = s.state, webhook = COALESCE(s.webhook, t.webhook), "
          + "state_updated = s.state_updated, state_rev = s.state_rev, archived = CURRENT_TIMESTAMP "
          + "WHEN NOT MATCHED THEN INSERT (tx_id, owner, external_id, type, status, created, completed, state, "
          + "webhook, state_updated, state_rev, archived) VALUES (s.tx_id, s.owner, s.external_id, s.type, "
          + "s.status, s.created, s.completed, s.state, s.webhook, s.state_updated, s.state_rev, "
          + "CURRENT_TIMESTAMP)")) {
        for (ArchivedTx t : batch) {
          p.setString(1, t.txId());
          p.setString(2, NulSafe.column(t.owner()));
          p.setString(3, NulSafe.column(t.externalId()));
          p.setString(4, NulSafe.column(t.type()));
          p.setString(5, NulSafe.column(t.status()));
          p.setTimestamp(6, new Timestamp(t.created()));
          if (t.completed() == null) {
            p.setNull(7, Types.TIMESTAMP_WITH_TIMEZONE);
          } else {
            p.setTimestamp(7, new Timestamp(t.completed()));
          }
          p.setString(8, NulSafe.text(t.state()));
          p.setString(9, NulSafe.text(t.webhook()));
          p.setLong(10, t.stampUpdated());
          p.setLong(11, t.stampRev());
          p.addBatch();
        }
        p.executeBatch();
        connection.commit();
      } catch (SQLException e) {
        connection.rollback();
        throw e;
      }
      return null;
    });
  }

  @Override
  public Future<Boolean> updateWebhook(String txId, JsonObject webhook) {
    return blocking(() -> {
      try (PreparedStatement p = connection.prepareStatement("UPDATE " + table + " SET webhook = ? WHERE tx_id = ?")) {
        p.setString(1, NulSafe.text(webhook));
        p.setString(2, txId);
        int n = p.executeUpdate();
        connection.commit();
        return n == 1;
      } catch (SQLException e) {
        connection.rollback();
        throw e;
      }
    });
  }

  @Override
  public Future<ArchivedTx> find(String txId) {
    return query("SELECT tx_id, state, webhook FROM " + table + " WHERE tx_id = ?", txId);
  }

  @Override
  public Future<ArchivedTx> findByExternalId(String owner, String externalId) {
    return query("SELECT tx_id, state, webhook FROM " + table
        + " WHERE owner = ? AND external_id = ? ORDER BY created DESC LIMIT 1", NulSafe.column(owner),
        NulSafe.column(externalId));
  }

  @Override
  public Future<java.util.List<String>> ended(String type, String status, long from, long to, int limit) {
    return blocking(() -> {
      try (PreparedStatement p = connection.prepareStatement("SELECT tx_id FROM " + table + " WHERE type = ? AND "
          + "status = ? AND completed >= ? AND completed < ? ORDER BY completed LIMIT ?")) {
        p.setString(1, NulSafe.column(type));
        p.setString(2, NulSafe.column(status));
        p.setObject(3, ArchiveStore.timestamp(from));
        p.setObject(4, ArchiveStore.timestamp(to));
        p.setInt(5, limit);
        java.util.List<String> ids = new java.util.ArrayList<>();
        try (ResultSet rs = p.executeQuery()) {
          while (rs.next()) {
            ids.add(rs.getString(1));
          }
        }
        connection.commit();
        return ids;
      }
    });
  }

  @Override
  public Future<Found> search(ArchiveQuery q) {
    StringBuilder sql = new StringBuilder("SELECT tx_id, state, webhook FROM " + table + " WHERE TRUE");
    java.util.List<Object> params = new java.util.ArrayList<>();
    q.whereCommon(sql, params, n -> "?");
    if (q.statuses() != null && !q.statuses().isEmpty()) {
      sql.append(" AND status IN (").append(String.join(", ", java.util.Collections.nCopies(q.statuses().size(), "?")))
          .append(")");
      params.addAll(q.statuses());
    }
    if (q.beforeCreated() != null) {
      sql.append(" AND (created < ? OR (created = ? AND tx_id < ?))");
      params.add(ArchiveStore.timestamp(q.beforeCreated()));
      params.add(ArchiveStore.timestamp(q.beforeCreated()));
      params.add(q.beforeTx());
    }
    if (q.text() != null) {
      // H2 has no JSON operators here: the whole state narrows, the metadata check below decides
      sql.append(" AND LOWER(state) LIKE ? ESCAPE '\\'");
      params.add(NulSafe.column(q.likePattern()));
    }
    sql.append(" ORDER BY created DESC, tx_id DESC LIMIT ?");
    params.add(q.limit());
    return blocking(() -> {
      try (PreparedStatement p = connection.prepareStatement(sql.toString())) {
        for (int i = 0; i < params.size(); i++) {
          p.setObject(i + 1, params.get(i));
        }
        java.util.List<ArchivedTx> out = new java.util.ArrayList<>();
        int looked = 0;
        ArchivedTx last = null;
        try (ResultSet rs = p.executeQuery()) {
          while (rs.next()) {
            looked++;
            ArchivedTx t = NulSafe.read(rs.getString(1), rs.getString(2), rs.getString(3));
            last = t;
            if (q.metadataHolds(t.state().getString("metadata"))) {
              out.add(t);
            }
          }
        }
        connection.commit();
        return new Found(out, looked, last == null ? 0 : last.created(), last == null ? null : last.txId());
      }
    });
  }

  @Override
  public Future<Integer> deleteCompletedBefore(long before, int limit) {
    return blocking(() -> {
      try (PreparedStatement p = connection.prepareStatement("DELETE FROM " + table + " WHERE tx_id IN (SELECT tx_id FROM "
          + table + " WHERE completed < ? ORDER BY completed LIMIT ?)")) {
        p.setObject(1, ArchiveStore.timestamp(before));
        p.setInt(2, limit);
        int n = p.executeUpdate();
        connection.commit();
        return n;
      }
    });
  }

  @Override
  public Future<Void> appendAudit(List<io.conveyor.model.AuditEntry> entries, List<String> streamIds) {
    return entries.isEmpty() ? Future.succeededFuture() : inTransaction(() -> {
      AuditRows.append(connection, table, entries, streamIds);
      return null;
    });
  }

  @Override
  public Future<List<io.conveyor.model.AuditEntry>> audit(AuditQuery q) {
    return inTransaction(() -> AuditRows.read(connection, table, q));
  }

  @Override
  public Future<Integer> pruneAuditBefore(long before, int limit) {
    return inTransaction(() -> AuditRows.prune(connection, table, before, limit));
  }

  /** Work that commits when it succeeds and rolls back when it fails (a refused row leaves nothing open). */
  private <T> Future<T> inTransaction(Callable<T> work) {
    return blocking(() -> {
      try {
        T result = work.call();
        connection.commit();
        return result;
      } catch (Exception e) {
        connection.rollback();
        throw e;
      }
    });
  }

  private Future<ArchivedTx> query(String sql, String... params) {
    return blocking(() -> {
      try (PreparedStatement p = connection.prepareStatement(sql)) {
        for (int i = 0; i < params.length; i++) {
          p.setString(i + 1, params[i]);
        }
        try (ResultSet rs = p.executeQuery()) {
          ArchivedTx t = rs.next() ? NulSafe.read(rs.getString(1), rs.getString(2), rs.getString(3)) : null;
          connection.commit();
          return t;
        }
      }
    });
  }

  /** Closes the connection on the store's thread and waits for it (Vert.x may be closed already). */
  @Override
  public Future<Void> close() {
    if (executor.isShutdown()) {
      return Future.succeededFuture();
    }
    java.util.concurrent.Future<?> closed = executor.submit(() -> {
      if (connection != null) {
        try {
          connection.close();
        } catch (SQLException e) {
          // closing at shutdown: nothing is left to lose
        }
      }
    });
    executor.shutdown();
    try {
      closed.get(10, java.util.concurrent.TimeUnit.SECONDS);
    } catch (Exception e) {
      return Future.failedFuture(e);
    }
    return Future.succeededFuture();
  }

  @Override
  public String describe() {
    return "embedded H2 file " + file + " table " + table + " (not for production: use PostgreSQL)";
  }
}
