package io.conveyor.database;

import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.List;

/**
 * Where finished transactions go to stay: PostgreSQL in production, an embedded H2 file by default. One
 * contract (ArchiveStoreContract in the tests) holds for both.
 */
public interface ArchiveStore {

  /** Connects and creates or migrates the schema; safe when several nodes open the same archive at once. */
  Future<Void> open();

  /** Writes a batch in one round trip, replacing any earlier copy of the same transactions (upsert by txId). */
  Future<Void> write(List<ArchivedTx> batch);

  /** Records how a webhook delivery ended for an archived transaction; false when it has no row. */
  Future<Boolean> updateWebhook(String txId, io.vertx.core.json.JsonObject webhook);

  /** One transaction, or null. */
  Future<ArchivedTx> find(String txId);

  /** An owner's latest transaction with that externalId, or null. */
  Future<ArchivedTx> findByExternalId(String owner, String externalId);

  /**
   * The txIds of a pipeline's transactions that ended with this status, completed in [from, to) (ms), oldest
   * first, at most limit of them.
   */
  Future<List<String>> ended(String type, String status, long from, long to, int limit);

  /**
   * Archived transactions matching a search, newest first (see ArchiveQuery), at most q.limit() rows looked at:
   * the answer is short when rows fell to the exact text check after a coarser one in SQL, so fewer than
   * limit rows answered does not mean the end; rowsLooked tells (see Found).
   */
  Future<Found> search(ArchiveQuery q);

  /** A search's answer: the rows that match, how many rows it read, and the last one read (its created, txId). */
  record Found(List<ArchivedTx> rows, int rowsLooked, long lastCreated, String lastTx) {
  }

  /**
   * Deletes up to limit transactions that completed before the time (ms), oldest first; answers how many went.
   * Called in batches, so a large backlog never holds the table long.
   */
  Future<Integer> deleteCompletedBefore(long before, int limit);

  /**
   * Appends admin acts to the audit log (README, Audit log) in one round trip. The table is append-only: it refuses
   * UPDATE and DELETE; only pruneAuditBefore removes entries. Each entry's streamId (its auditX stream id, or null)
   * goes to a unique column: an entry whose streamId the table holds already is skipped, so writing the same entries
   * again adds nothing. Text is cut to the columns' sizes (AuditRows.values). Not default methods: a wrapper that
   * forgot to pass them on would lose the audit silently.
   */
  Future<Void> appendAudit(List<io.conveyor.model.AuditEntry> entries, List<String> streamIds);

  /** The same, entries without a stream id (always added). */
  default Future<Void> appendAudit(List<io.conveyor.model.AuditEntry> entries) {
    return appendAudit(entries, java.util.Collections.nCopies(entries.size(), null));
  }

  /** A page of the audit log, newest first (see AuditQuery). */
  Future<List<io.conveyor.model.AuditEntry>> audit(AuditQuery q);

  /** Deletes up to limit audit entries older than the time (ms), oldest first (audit.retention); answers how many. */
  Future<Integer> pruneAuditBefore(long before, int limit);

  /** A time in ms as a timestamp column holds it (clamped to the years 0–9999 SQL can hold). */
  static java.time.OffsetDateTime timestamp(long ms) {
    long clamped = Math.max(-62_167_219_200_000L, Math.min(ms, 253_402_300_799_999L));
    return java.time.Instant.ofEpochMilli(clamped).atOffset(java.time.ZoneOffset.UTC);
  }

  Future<Void> close();

  /** Where it is, for logs (never a password). */
  String describe();

  /**
   * The store archive.url names: empty for the embedded H2 file data/archive, h2:PATH for another H2 file,
   * postgresql://… (or postgres://…) for PostgreSQL, reached with tls (security.archive.tls; H2 takes none).
   */
  static ArchiveStore forConfig(Vertx vertx, Config.Archive config, Config.ArchiveTls tls) {
    String url = config.url();
    if (url.isEmpty()) {
      return new H2ArchiveStore(vertx, Path.of("data", "archive"), config.table());
    }
    if (url.startsWith("h2:")) {
      return new H2ArchiveStore(vertx, Path.of(url.substring(3)), config.table());
    }
    if (url.startsWith("postgresql://") || url.startsWith("postgres://")) {
      return new PgArchiveStore(vertx, url, config.table(), tls);
    }
    throw new ConfigException("archive.url (CONVEYOR_ARCHIVE_URL): expected empty (embedded H2 under data/), "
        + "h2:PATH or postgresql://user@host:port/database, got " + io.conveyor.config.MaskedUrl.of(url));
  }
}
