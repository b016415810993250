package io.conveyor.database;

import io.conveyor.model.AuditEntry;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The audit table (&lt;archive.table&gt;_audit, db/archive/*&#47;V4__audit.sql) over JDBC, for the embedded H2
 * store, which runs these on its own thread in its own transaction. Its text columns hold what the API's audit hook
 * cleaned (no control characters, bounded lengths).
 */
final class AuditRows {
  static final String COLUMNS = "at, key_id, owner, action, target, outcome, status, error, remote, via, node, params";

  private AuditRows() {
  }

  /** Column sizes of V4__audit.sql (H2's; PostgreSQL's text columns get the same cut, so both hold the same). */
  static final int KEY_ID = 64;
  static final int NAME = 1024;
  static final int TARGET = 4096;
  static final int WORD = 16;
  static final int TEXT = 256;

  /** Adds the entries, skipping those whose stream id the table (or an earlier entry here) holds already. */
  static void append(Connection c, String table, List<AuditEntry> entries, List<String> streamIds)
      throws SQLException {
    Set<String> seen = stored(c, table, streamIds);
    int added = 0;
    try (PreparedStatement p = c.prepareStatement("INSERT INTO " + table + "_audit (" + COLUMNS
        + ", stream_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      for (int k = 0; k < entries.size(); k++) {
        String id = streamIds.get(k);
        if (id != null && !seen.add(id)) {
          continue;
        }
        int i = 0;
        for (Object v : values(entries.get(k))) {
          p.setObject(++i, v);
        }
        p.setString(++i, id);
        p.addBatch();
        added++;
      }
      if (added > 0) {
        p.executeBatch();
      }
    }
  }

  /** Which of the stream ids the table holds (H2 only: one writer per file, so a look before the insert is safe). */
  private static Set<String> stored(Connection c, String table, List<String> streamIds) throws SQLException {
    List<String> ids = streamIds.stream().filter(java.util.Objects::nonNull).toList();
    Set<String> out = new HashSet<>();
    if (ids.isEmpty()) {
      return out;
    }
    try (PreparedStatement p = c.prepareStatement("SELECT stream_id FROM " + table + "_audit WHERE stream_id IN ("
        + String.join(", ", java.util.Collections.nCopies(ids.size(), "?")) + ")")) {
      for (int i = 0; i < ids.size(); i++) {
        p.setString(i + 1, ids.get(i));
      }
      try (ResultSet rs = p.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    }
    return out;
  }

  /** The column values of an entry, in COLUMNS' order, each text cut to its column's size. */
  static List<Object> values(AuditEntry e) {
    List<Object> v = new ArrayList<>(List.of(ArchiveStore.timestamp(e.at()), fit(e.keyId(), KEY_ID),
        fit(e.owner(), NAME), fit(e.action(), NAME), fit(e.target(), TARGET), fit(e.outcome(), WORD), e.status()));
    v.add(e.error() == null ? null : fit(e.error(), TEXT));
    v.addAll(List.of(fit(e.remote(), TEXT), fit(e.via(), WORD), fit(e.node(), KEY_ID), e.params().encode()));
    return v;
  }

  /** s in at most max characters: cut with an ellipsis when longer. */
  static String fit(String s, int max) {
    if (s == null) {
      return "";
    }
    return s.length() <= max ? s : s.substring(0, max - 1) + "…";
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
