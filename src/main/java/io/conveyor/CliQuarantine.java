package io.conveyor;

import io.conveyor.model.Ids;
import io.conveyor.redis.Code;
import io.conveyor.redis.QuarantineStore;
import io.conveyor.redis.StoreContext;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.time.Instant;
import java.util.List;

/**
 * conveyor archive-quarantine list|retry|drop: the transactions the archive database refused alone, as the
 * admin API shows them (GET /api/v1/admin/archive/quarantine), through the same scripts.
 */
final class CliQuarantine {
  static final String HELP = "archive-quarantine list [--limit N] [--cursor C] | archive-quarantine retry|drop TXID\n"
      + "     (transactions the archive database refused alone, kept in Redis: retry archives one again at once,\n"
      + "     drop deletes it from Redis for good)\n"
      + "    conveyor archive-quarantine list\n"
      + "    conveyor archive-quarantine retry tx-0f3a…";
  static final List<String> OPTIONS = List.of("--limit=", "--cursor=");

  private final QuarantineStore store;
  private final PrintStream out;
  private final boolean json;

  CliQuarantine(StoreContext redis, PrintStream out, boolean json) {
    this.store = new QuarantineStore(redis);
    this.out = out;
    this.json = json;
  }

  /** Runs one subcommand; Cli's exit codes. */
  int run(List<String> args) {
    String action = args.size() > 1 ? args.get(1) : "";
    return switch (action) {
      case "list" -> list(option(args, "--limit", "100"), option(args, "--cursor", null));
      case "retry", "drop" -> act(action, args.size() > 2 ? args.get(2) : null);
      default -> throw new IllegalArgumentException("archive-quarantine: expected list, retry or drop, got "
          + (action.isEmpty() ? "nothing" : action));
    };
  }

  private int list(String limit, String cursor) {
    int n;
    try {
      n = Integer.parseInt(limit);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--limit: expected a whole number from 1 to 1000, got " + limit);
    }
    if (n < 1 || n > 1000) {
      throw new IllegalArgumentException("--limit: expected a whole number from 1 to 1000, got " + limit);
    }
    if (cursor != null && !cursor.matches("\\d{1,6}-\\d{1,20}")) {
      throw new IllegalArgumentException("--cursor: expected the one a page printed (PARTITION-POSITION), got "
          + cursor);
    }
    QuarantineStore.Page page = store.list(cursor, n).await();
    for (QuarantineStore.Quarantined q : page.items()) {
      JsonObject j = q.toJson();
      out.println(json ? j.encode() : q.txId() + "  set aside " + Instant.ofEpochMilli(j.getLong("time", 0L))
          + "  sqlState " + j.getString("sqlState", "-") + "  " + j.getString("message"));
    }
    if (page.next() != null) {
      out.println(json ? new JsonObject().put("next", page.next()).encode() : "more: --cursor " + page.next());
    } else if (!json && page.items().isEmpty()) {
      out.println("nothing is quarantined");
    }
    return Cli.OK;
  }

  private int act(String action, String txId) {
    if (!Ids.isTxId(txId)) {
      throw new IllegalArgumentException("archive-quarantine " + action + ": expected TXID (tx- and 32 hex digits), "
          + "got " + txId);
    }
    Code code = (action.equals("retry") ? store.retry(txId, "cli") : store.drop(txId, "cli")).await();
    if (code != Code.OK) {
      out.println(json ? new JsonObject().put("txId", txId).put("result", "not-quarantined").encode()
          : txId + " is not quarantined (archive-quarantine list shows what is)");
      return Cli.REFUSED;
    }
    String result = action.equals("retry") ? "due" : "dropped";
    out.println(json ? new JsonObject().put("txId", txId).put("result", result).encode()
        : txId + (action.equals("retry") ? " is due for archiving again" : " is dropped from Redis"));
    return Cli.OK;
  }

  private static String option(List<String> args, String name, String otherwise) {
    int i = args.indexOf(name);
    return i >= 0 && i + 1 < args.size() ? args.get(i + 1) : otherwise;
  }
}
