package io.conveyor;

import io.conveyor.domain.Search;
import io.vertx.core.json.JsonObject;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** conveyor list (or search): a page, or with --all every page, of the transaction search, one a line. */
@Command(name = "list", aliases = "search", description = {"Search transactions, live and archived, newest first.",
    "A page (more: --cursor … when it is not the last), or every page with --all."},
    footerHeading = "%nExamples:%n", footer = {"  conveyor list --status failed --pipeline order --from 2026-11-24T00:00:00Z",
        "  conveyor search --q 'order-17' --all --json"})
final class CliList implements Callable<Integer> {
  private final CliSession s;
  @Option(names = "--status", paramLabel = "S[,S…]", completionCandidates = Phases.class,
      description = "Where it stands or how it ended: ${COMPLETION-CANDIDATES}.")
  String status;
  @Option(names = "--pipeline", paramLabel = "P")
  String pipeline;
  @Option(names = "--owner", paramLabel = "O")
  String owner;
  @Option(names = "--external-id", paramLabel = "X")
  String externalId;
  @Option(names = "--from", paramLabel = "TIME", description = "Created at or after (ISO-8601 or ms).")
  String from;
  @Option(names = "--to", paramLabel = "TIME", description = "Created before (ISO-8601 or ms).")
  String to;
  @Option(names = "--q", paramLabel = "TEXT", description = "Text in its metadata.")
  String q;
  @Option(names = "--limit", paramLabel = "N", description = "At most N a page (1-500).")
  String limit;
  @Option(names = "--cursor", paramLabel = "C", description = "The page after the one that printed this cursor.")
  String cursor;
  @Option(names = "--all", description = "Every page (a progress line on stderr when the walk is long).")
  boolean all;

  CliList(CliSession s) {
    this.s = s;
  }

  /** The phases --status takes, for completion and the help. */
  static final class Phases implements Iterable<String> {
    @Override
    public Iterator<String> iterator() {
      return new TreeSet<>(Search.PHASES).iterator();
    }
  }

  @Override
  public Integer call() {
    Map<String, String> params = new LinkedHashMap<>();
    put(params, "status", status);
    put(params, "pipeline", pipeline);
    put(params, "owner", owner);
    put(params, "externalId", externalId);
    put(params, "from", from);
    put(params, "to", to);
    put(params, "q", q);
    put(params, "limit", limit);
    put(params, "cursor", cursor);
    Search.Query query = Search.parse(params, null);
    Search search = s.search();
    CliProgress progress = s.progress(1);
    int shown = 0;
    int pages = 0;
    boolean more = false;
    while (true) {
      JsonObject page = search.run(query).await();
      pages++;
      for (Object o : page.getJsonArray("transactions")) {
        JsonObject t = (JsonObject) o;
        shown++;
        s.out.println(s.json() ? t.encode() : t.getString("txId") + "  " + t.getString("type") + "  "
            + t.getString("phase") + "  owner " + t.getString("owner") + "  created " + t.getString("created")
            + (t.getString("externalId") == null ? "" : "  externalId " + t.getString("externalId")));
      }
      String next = page.getString("next");
      if (next == null) {
        break;
      }
      if (!all) {
        more = true;
        s.out.println(s.json() ? new JsonObject().put("next", next).put("partial", page.getBoolean("partial", false))
            .put("scannedTo", page.getString("scannedTo")).encode() : "more: --cursor " + next + reach(page, s.searchBudget()));
        break;
      }
      int sofar = shown;
      int walked = pages;
      progress.note(() -> "list: " + CliProgress.count(walked, "page") + ", " + CliProgress.count(sofar,
          "transaction") + " so far" + reach(page, s.searchBudget()));
      params.put("cursor", next);
      query = Search.parse(params, null);
    }
    if (!s.json() && shown == 0) {
      // a page comes back short with a cursor only when the search ran out of its time budget
      s.out.println(more ? "none on this page, but the search has not looked at everything: more may match"
          + " further on (--cursor above, or --all)" : "no transaction matches");
    }
    return Cli.OK;
  }

  /**
   * What a page says about how far its search looked: a page cut by the search's time budget (partial) says down
   * to which created time it looked, so a short or empty page is never read as "no more match".
   */
  static String reach(JsonObject page, java.time.Duration budget) {
    return page.getBoolean("partial", false) ? " (the search stopped after its time budget, " + budget.toMillis()
        + " ms, having looked down to created " + page.getString("scannedTo") + ")" : "";
  }

  private static void put(Map<String, String> params, String name, String value) {
    if (value != null) {
      params.put(name, value);
    }
  }
}
