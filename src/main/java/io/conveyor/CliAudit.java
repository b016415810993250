package io.conveyor;

import io.conveyor.api.AuditRoutes;
import io.conveyor.database.ArchiveStore;
import io.conveyor.model.AuditEntry;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** conveyor audit: the audit log of admin acts, as GET /api/v1/admin/audit shows it, read from the archive. */
@Command(name = "audit", description = {"List the audit log of admin acts, newest first.",
    "Every request that needed an admin key (refused ones too), every event-bus request with an admin key and every"
        + " command of this command line that changed shared state (README, Audit log), from the archive database."},
    footerHeading = "%nExamples:%n", footer = {"  conveyor audit --outcome refused",
        "  conveyor audit --action 'DELETE /api/v1/pipelines/:name' --from 2026-11-01T00:00:00Z"})
final class CliAudit implements Callable<Integer> {
  private final CliSession s;
  @Option(names = "--from", paramLabel = "TIME", description = "At or after (ISO-8601 instant or epoch ms).")
  String from;
  @Option(names = "--to", paramLabel = "TIME", description = "Before (ISO-8601 instant or epoch ms).")
  String to;
  @Option(names = "--key-id", paramLabel = "ID", description = "Of the key with this id (12 hex digits).")
  String keyId;
  @Option(names = "--owner", paramLabel = "OWNER", description = "Of keys of this owner.")
  String owner;
  @Option(names = "--action", paramLabel = "ACTION", description = "This route, e.g. 'PUT /api/v1/pipelines/:name'.")
  String action;
  @Option(names = "--target", paramLabel = "TARGET", description = "On this target (the route's path parameters).")
  String target;
  @Option(names = "--outcome", paramLabel = "OUTCOME", description = "ok, refused or failed.")
  String outcome;
  @Option(names = "--limit", paramLabel = "N", description = "At most N (1-1000, default 100).")
  String limit;
  @Option(names = "--cursor", paramLabel = "C", description = "The page after the one that printed it.")
  String cursor;

  CliAudit(CliSession s) {
    this.s = s;
  }

  @Override
  public Integer call() {
    Map<String, String> p = new LinkedHashMap<>();
    String[][] given = {{"from", from}, {"to", to}, {"keyId", keyId}, {"owner", owner}, {"action", action},
        {"target", target}, {"outcome", outcome}, {"limit", limit}, {"cursor", cursor}};
    for (String[] g : given) {
      if (g[1] != null) {
        p.put(g[0], g[1]);
      }
    }
    var query = AuditRoutes.query(p);
    ArchiveStore archive = s.tx().archive().await();
    if (archive == null) {
      throw new TxException(Kind.UNAVAILABLE, "the config names no archive (archive.url), where the audit log is",
          null, null);
    }
    List<AuditEntry> rows = archive.audit(query).await();
    for (AuditEntry e : rows) {
      s.out.println(s.json() ? e.toJson().encode() : java.time.Instant.ofEpochMilli(e.at()) + "  " + e.keyId() + " ("
          + e.owner() + ")  " + e.action() + "  " + (e.target().isEmpty() ? "-" : e.target()) + "  " + e.outcome()
          + " " + e.status() + (e.error() == null ? "" : " " + e.error()) + "  from " + e.remote());
    }
    if (rows.size() == query.limit()) {
      String next = Long.toString(rows.get(rows.size() - 1).id());
      s.out.println(s.json() ? new JsonObject().put("next", next).encode() : "more: --cursor " + next);
    } else if (!s.json() && rows.isEmpty()) {
      s.out.println("no admin act matches");
    }
    return Cli.OK;
  }
}
