package io.conveyor.api;

import io.conveyor.database.ArchiveStore;
import io.conveyor.database.AuditQuery;
import io.conveyor.model.AuditEntry;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * GET /api/v1/admin/audit (README, Audit log): the archive's audit log, newest first, by time, key id, owner,
 * action, target and outcome, a page at a time (next goes back as cursor). archive is null on a node without one.
 */
public record AuditRoutes(ArchiveStore archive) implements RouteGroup {
  static final int MAX_LIMIT = 1000;
  static final Set<String> OUTCOMES = Set.of("ok", "refused", "failed");

  @Override
  public void mount(Router r) {
    r.get("/api/v1/admin/audit").handler(ctx -> HttpIo.json(ctx, page(HttpIo.params(ctx))));
  }

  /** {entries: [...], next}: next is null on the last page. */
  Future<JsonObject> page(Map<String, String> p) {
    if (archive == null) {
      return Future.failedFuture(new TxException(Kind.UNAVAILABLE, "this node has no archive, where the audit log "
          + "is kept: ask a node with one (archive.url)", null, null));
    }
    AuditQuery q;
    try {
      q = query(p);
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
    return archive.audit(q).map(rows -> {
      JsonArray entries = new JsonArray();
      rows.forEach(e -> entries.add(e.toJson()));
      List<AuditEntry> list = rows;
      return new JsonObject().put("entries", entries).put("next", list.size() < q.limit() ? null
          : Long.toString(list.get(list.size() - 1).id()));
    });
  }

  /** The query of the parameters (from, to, keyId, owner, action, target, outcome, cursor, limit); 400 when bad. */
  public static AuditQuery query(Map<String, String> p) {
    for (Map.Entry<String, String> e : p.entrySet()) {
      if (e.getValue() == null || e.getValue().isBlank()) {
        throw TxException.invalid(e.getKey(), e.getValue() == null ? "given more than once" : "empty: leave it out");
      }
    }
    String outcome = p.get("outcome");
    if (outcome != null && !OUTCOMES.contains(outcome)) {
      throw TxException.invalid("outcome", "expected ok, refused or failed, got " + outcome);
    }
    String cursor = p.get("cursor");
    if (cursor != null && !cursor.matches("\\d{1,18}")) {
      throw TxException.invalid("cursor", "expected the next of an earlier answer, got " + cursor);
    }
    int limit;
    try {
      limit = p.get("limit") == null ? 100 : Integer.parseInt(p.get("limit"));
    } catch (NumberFormatException e) {
      limit = -1;
    }
    if (limit < 1 || limit > MAX_LIMIT) {
      throw TxException.invalid("limit", "expected a whole number from 1 to " + MAX_LIMIT + ", got " + p.get("limit"));
    }
    return new AuditQuery(time(p, "from"), time(p, "to"), p.get("keyId"), p.get("owner"), p.get("action"),
        p.get("target"), outcome, cursor == null ? null : Long.parseLong(cursor), limit);
  }

  private static Long time(Map<String, String> p, String name) {
    String t = p.get(name);
    if (t == null) {
      return null;
    }
    try {
      return t.matches("\\d{1,15}") ? Long.parseLong(t) : Instant.parse(t).toEpochMilli();
    } catch (DateTimeParseException e) {
      throw TxException.invalid(name, "expected an ISO-8601 instant (2026-01-31T12:00:00Z) or epoch milliseconds, "
          + "got " + t);
    }
  }
}
