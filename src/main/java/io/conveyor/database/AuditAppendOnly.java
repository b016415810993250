package io.conveyor.database;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.h2.api.Trigger;

/**
 * The H2 audit table's trigger (V4__audit.sql): an UPDATE is refused, and so is a DELETE unless the session is
 * pruning (AuditRows.prune sets @conveyor_audit_prune), as PostgreSQL's trigger and prune function do.
 */
public final class AuditAppendOnly implements Trigger {
  private String table;

  @Override
  public void init(Connection conn, String schemaName, String triggerName, String tableName, boolean before,
                   int type) {
    this.table = tableName;
  }

  @Override
  public void fire(Connection conn, Object[] oldRow, Object[] newRow) throws SQLException {
    if (newRow == null && pruning(conn)) {
      return;
    }
    throw new SQLException("the audit log " + table + " is append-only: " + (newRow == null ? "DELETE" : "UPDATE")
        + " refused (entries go only by audit.retention)", "42501");
  }

  private static boolean pruning(Connection conn) throws SQLException {
    try (Statement s = conn.createStatement(); ResultSet rs = s.executeQuery("SELECT @conveyor_audit_prune")) {
      return rs.next() && rs.getBoolean(1);
    }
  }
}
