package io.conveyor;

import io.conveyor.model.Ids;
import io.conveyor.redis.Code;
import io.conveyor.redis.QuarantineStore;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * conveyor archive-quarantine list|retry|drop: the transactions the archive database refused alone, as the
 * admin API shows them (GET /api/v1/admin/archive/quarantine), through the same scripts.
 */
@Command(name = "archive-quarantine", description = {"List, retry or drop what the archive database refused.",
    "Transactions the archive database refused alone stay in Redis: list them with the database's message, retry"
        + " one (archived again at once) or drop one (deleted from Redis for good)."}, footerHeading = "%nExamples:%n", footer = {"  conveyor archive-quarantine list",
        "  conveyor archive-quarantine retry tx-0f3a…"})
final class CliQuarantine {
  private final CliSession s;

  CliQuarantine(CliSession s) {
    this.s = s;
  }

  private QuarantineStore store() {
    return new QuarantineStore(s.tx().context());
  }

  @Command(name = "list", description = "A page of them, oldest first (more: --cursor … when it is not the last).")
  int list(@Option(names = "--limit", paramLabel = "N", description = "At most N (1-1000, default 100).")
           String limit,
           @Option(names = "--cursor", paramLabel = "C", description = "The page after the one that printed it.")
           String cursor) {
    int n = CliArgs.whole(limit == null ? "100" : limit, "--limit", 1000);
    if (cursor != null && !cursor.matches("\\d{1,6}-\\d{1,20}")) {
      throw new IllegalArgumentException("--cursor: expected the one a page printed (PARTITION-POSITION), got "
          + cursor);
    }
    QuarantineStore.Page page = store().list(cursor, n).await();
    for (QuarantineStore.Quarantined q : page.items()) {
      JsonObject j = q.toJson();
      s.out.println(s.json() ? j.encode() : q.txId() + "  set aside " + Instant.ofEpochMilli(j.getLong("time", 0L))
          + "  sqlState " + j.getString("sqlState", "-") + "  " + j.getString("message"));
    }
    if (page.next() != null) {
      s.out.println(s.json() ? new JsonObject().put("next", page.next()).encode() : "more: --cursor " + page.next());
    } else if (!s.json() && page.items().isEmpty()) {
      s.out.println("nothing is quarantined");
    }
    return Cli.OK;
  }

  @Command(name = "retry", description = "Archive it again at once.")
  int retry(@Parameters(paramLabel = "TXID") String txId) {
    return act("retry", txId);
  }

  @Command(name = "drop", description = "Delete it from Redis for good.")
  int drop(@Parameters(paramLabel = "TXID") String txId) {
    return act("drop", txId);
  }

  private int act(String action, String txId) {
    if (!Ids.isTxId(txId)) {
      throw new IllegalArgumentException("expected TXID (tx- and 32 hex digits), got " + txId);
    }
    Code code = (action.equals("retry") ? store().retry(txId, "cli") : store().drop(txId, "cli")).await();
    if (code != Code.OK) {
      s.out.println(s.json() ? new JsonObject().put("txId", txId).put("result", "not-quarantined").encode()
          : txId + " is not quarantined (archive-quarantine list shows what is)");
      return Cli.REFUSED;
    }
    String result = action.equals("retry") ? "due" : "dropped";
    s.out.println(s.json() ? new JsonObject().put("txId", txId).put("result", result).encode()
        : txId + (action.equals("retry") ? " is due for archiving again" : " is dropped from Redis"));
    return Cli.OK;
  }
}
