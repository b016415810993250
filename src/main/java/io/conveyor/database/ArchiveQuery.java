package io.conveyor.database;

import java.util.List;

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

  /** Whether a row's metadata JSON holds the text (the exact check; H2 narrows with LIKE on the whole state). */
  public boolean metadataHolds(String metadata) {
    return text == null || (metadata != null && metadata.toLowerCase(java.util.Locale.ROOT)
        .contains(text.toLowerCase(java.util.Locale.ROOT)));
  }
}
