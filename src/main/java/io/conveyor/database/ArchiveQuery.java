package io.conveyor.database;

import java.util.List;
import java.util.function.IntFunction;

/**
 * A search of the archive: each filter null (or empty) when not given. statuses are final statuses; text must be
 * in the metadata JSON (case-insensitive); created in [from, to) ms. Rows come newest first (created, then
 * txId, both descending), below (beforeCreated, beforeTx) when given, at most limit of them.
 */
public record ArchiveQuery(String owner, String type, List<String> statuses, String externalId, Long from, Long to,
                           String text, Long beforeCreated, String beforeTx, int limit) {

  /** text as a LIKE pattern: its wildcards and the escape character taken literally, in %…%. */
  public String likePattern() {
    return "%" + text.toLowerCase(java.util.Locale.ROOT).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        + "%";
  }

  /**
   * The filters both databases write alike (owner, type, externalId, created from and to), appended to sql as
   * " AND <condition>" with their values added to params; mark(n) writes the n-th parameter's placeholder (? in
   * H2, $n in PostgreSQL). The statuses, the page and the text differ by database: each store adds them.
   */
  void whereCommon(StringBuilder sql, List<Object> params, IntFunction<String> mark) {
    where(sql, params, mark, "owner = ", NulSafe.column(owner));
    where(sql, params, mark, "type = ", NulSafe.column(type));
    where(sql, params, mark, "external_id = ", NulSafe.column(externalId));
    where(sql, params, mark, "created >= ", from == null ? null : ArchiveStore.timestamp(from));
    where(sql, params, mark, "created < ", to == null ? null : ArchiveStore.timestamp(to));
  }

  private static void where(StringBuilder sql, List<Object> params, IntFunction<String> mark, String test,
                            Object value) {
    if (value != null) {
      params.add(value);
      sql.append(" AND ").append(test).append(mark.apply(params.size()));
    }
  }

  /** Whether a row's metadata JSON holds the text (the exact check; H2 narrows with LIKE on the whole state). */
  public boolean metadataHolds(String metadata) {
    return text == null || (metadata != null && searchable(metadata).toLowerCase(java.util.Locale.ROOT)
        .contains(text.toLowerCase(java.util.Locale.ROOT)));
  }

  /**
   * What a search may match of stored metadata: all of it, or of a sealed one (encryption at rest) only what comes
   * from its fields kept in clear on ("clear":), never the base64 of the sealed text before them.
   */
  public static String searchable(String metadata) {
    if (!metadata.startsWith(SEALED)) {
      return metadata;
    }
    int clear = metadata.indexOf("\"clear\":");
    return clear < 0 ? "" : metadata.substring(clear);
  }

  /** How a sealed metadata's JSON text starts (crypto.Payloads' envelope). */
  static final String SEALED = "{\"$sealed\"";

  /** The same in SQL, for a column expression of the metadata's text (PostgreSQL; position is 1-based). */
  static String searchableSql(String m) {
    return "(CASE WHEN left(" + m + ", 10) = '" + SEALED + "' THEN coalesce(substring(" + m + " from nullif(position('"
        + "\"clear\":' in " + m + "), 0)), '') ELSE " + m + " END)";
  }
}
