package io.conveyor.database;

import io.conveyor.model.AuditEntry;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * The audit table (&lt;archive.table&gt;_audit, db/archive/*&#47;V4__audit.sql) over JDBC, for the embedded H2
 * store, which runs these on its own thread in its own transaction. Its text columns hold what the API's audit hook
 * cleaned (no control characters, bounded lengths).
 */
final class AuditRows {
  static final String COLUMNS = "at, key_id, owner, action, target, outcome, status, error, remote, via, node, params";

  private AuditRows() {
  }

  static void append(Connection c, String table, List<AuditEntry> entries) throws SQLException {
    try (PreparedStatement p = c.prepareStatement("INSERT INTO " + table + "_audit (" + COLUMNS
        + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      for (AuditEntry e : entries) {
        int i = 0;
        for (Object v : values(e)) {
          p.setObject(++i, v);
        }
        p.addBatch();
      }
      p.executeBatch();
    }
  }

  /** The column values of an entry, in COLUMNS' order. */
  static List<Object> values(AuditEntry e) {
    List<Object> v = new ArrayList<>(List.of(ArchiveStore.timestamp(e.at()), e.keyId(), e.owner(), e.action(),
        e.target(), e.outcome(), e.status()));
    v.add(e.error());
    v.addAll(List.of(e.remote(), e.via(), e.node(), e.params().encode()));
    return v;
  }

  static List<AuditEntry> read(Connection c, String table, AuditQuery q) throws SQLException {
    List<Object> params = new ArrayList<>();
    String where = q.where(params, n -> "?");
    try (PreparedStatement p = c.prepareStatement("SELECT id, " + COLUMNS + " FROM " + table + "_audit" + where)) {
      for (int i = 0; i < params.size(); i++) {
        p.setObject(i + 1, params.get(i));
      }
      List<AuditEntry> out = new ArrayList<>();
      try (ResultSet rs = p.executeQuery()) {
        while (rs.next()) {
          out.add(new AuditEntry(rs.getLong(1), rs.getObject(2, OffsetDateTime.class).toInstant().toEpochMilli(),
              rs.getString(3), rs.getString(4), rs.getString(5), rs.getString(6), rs.getString(7), rs.getInt(8),
              rs.getString(9), rs.getString(10), rs.getString(11), rs.getString(12), new JsonObject(rs.getString(13))));
        }
      }
      return out;
    }
  }

  /**
   * Deletes up to limit entries older than before (ms), oldest first. The table's trigger (AuditAppendOnly) lets a
   * DELETE through only while the session variable @conveyor_audit_prune is set, which this alone sets and clears.
   */
  static int prune(Connection c, String table, long before, int limit) throws SQLException {
    try (PreparedStatement on = c.prepareStatement("SET @conveyor_audit_prune = TRUE");
         PreparedStatement p = c.prepareStatement("DELETE FROM " + table + "_audit WHERE id IN (SELECT id FROM "
             + table + "_audit WHERE at < ? ORDER BY at LIMIT ?)");
         PreparedStatement off = c.prepareStatement("SET @conveyor_audit_prune = FALSE")) {
      on.execute();
      try {
        p.setObject(1, ArchiveStore.timestamp(before));
        p.setInt(2, limit);
        return p.executeUpdate();
      } finally {
        off.execute();
      }
    }
  }
}
