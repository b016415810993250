package io.conveyor.domain;

import io.conveyor.config.Names;
import io.conveyor.database.ArchiveStore;
import io.conveyor.model.Ids;
import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.Keys;
import io.conveyor.redis.ReadStore;
import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The transaction search: live transactions (Redis, each partition's liveZ walked by search.lua) and archived
 * ones (the archive, by SQL) in one list, newest first (created, then txId, both descending), a page at a time.
 * A page's cursor is the key of the last transaction it holds, so the next page starts strictly below it: a
 * transaction started meanwhile sorts above and never shifts a page, and one that moves from Redis to the archive
 * keeps its key. Each source answers what it found down to where it stopped looking; the page holds only what
 * lies above the highest such stop of a source with more to look at, so nothing below it can be missing.
 */
public final class Search {
  /**
   * Phases a search may ask for: where a live transaction stands, or its final status; and stuck, a live one its
   * partition's reaper leader lists as stuck (stuckH; found by walking liveZ: the stuck list is not kept by created
   * time, and GET /api/v1/admin/stuck reads it directly).
   */
  public static final Set<String> PHASES = Set.of("queued", "running", "sleeping", "waiting", "retrying",
      "scheduled", "paused", "stuck", "success", "failed", "aborted", "cancelled", "timeout", "internal-error");
  private static final Set<String> FINAL = Set.of("success", "failed", "aborted", "cancelled", "timeout",
      "internal-error");
  /**
   * The phase indexes (Keys.phaseZ) and the phases each holds: a live transaction is added by the script that
   * brings it into one of them (complete and the cancels: ended other than success; retry, and a sleep of a step
   * a retry runs again: retrying; sleep on a switch, hop, fork: waiting; pause: paused), and leaves when archived
   * (or resumed, from paused) or when a
   * search finds it has left them. Operators look for these all day, and few transactions are in them.
   */
  private static final Map<String, Set<String>> HELD = Map.of(
      "ended", Set.of("failed", "aborted", "cancelled", "timeout", "internal-error"),
      "retrying", Set.of("retrying"), "waiting", Set.of("waiting"), "paused", Set.of("paused"));
  /** Each indexed phase's index. */
  private static final Map<String, String> INDEXED = indexed();

  private static Map<String, String> indexed() {
    Map<String, String> m = new java.util.HashMap<>();
    HELD.forEach((name, phases) -> phases.forEach(ph -> m.put(ph, name)));
    return Map.copyOf(m);
  }
  /**
   * Entries of one partition's index looked at per script call at most: a rare filter over a deep backlog goes on
   * in the next call, so no call holds Redis long (a few ms).
   */
  public static final int PER_CALL = 5_000;
  /** The default of http.searchBudget: how long one page's walk may go on before it answers what it has. */
  public static final Duration BUDGET = Duration.ofSeconds(1);
  public static final int MAX_LIMIT = 500;
  private static final Set<String> PARAMS = Set.of("status", "pipeline", "owner", "externalId", "from", "to", "q",
      "limit", "cursor");

  private final ReadStore reads;
  private final Keys keys;
  private final ArchiveStore archive;
  private final int perCall;
  private final Ticker ticker;
  private final Duration budget;

  public Search(ReadStore reads, Keys keys, ArchiveStore archive) {
    this(reads, keys, archive, PER_CALL);
  }

  /** With perCall entries looked at per partition and call (a test makes it small to make walks long). */
  public Search(ReadStore reads, Keys keys, ArchiveStore archive, int perCall) {
    this(reads, keys, archive, perCall, Ticker.SYSTEM, BUDGET);
  }

  /** A page's walk goes on while the ticker has moved less than budget since it began. */
  public Search(ReadStore reads, Keys keys, ArchiveStore archive, int perCall, Ticker ticker, Duration budget) {
    this.reads = reads;
    this.keys = keys;
    this.archive = archive;
    this.perCall = perCall;
    this.ticker = ticker;
    this.budget = budget;
  }

  /** A parsed search: filters null (phases empty) when not given; created in [from, to). */
  public record Query(String owner, String pipeline, Set<String> phases, String externalId, Long from, Long to,
                      String text, int limit, Long afterCreated, String afterTx) {
  }

  /** The query parameters a search accepts (owner only on the admin route). */
  public static Set<String> params() {
    return PARAMS;
  }

  /**
   * Parses the query parameters; owner is the caller's own (the client route: any owner parameter is refused) or
   * null (the admin route: the owner parameter, if any). Refuses what is malformed, naming the parameter.
   */
  public static Query parse(Map<String, String> p, String forcedOwner) {
    String owner = forcedOwner;
    if (p.containsKey("owner")) {
      if (forcedOwner != null) {
        throw TxException.invalid("owner", "a client searches its own transactions only (admins: "
            + "GET /api/v1/admin/transactions?owner=…)");
      }
      owner = nonEmpty(p, "owner");
    }
    Set<String> phases = new TreeSet<>();
    if (p.containsKey("status")) {
      for (String s : nonEmpty(p, "status").split(",")) {
        String one = s.trim();
        if (!PHASES.contains(one)) {
          throw TxException.invalid("status", "unknown status '" + one + "'"
              + Names.suggestion(one, PHASES) + "; accepted: " + String.join(", ", new TreeSet<>(PHASES)));
        }
        phases.add(one);
      }
    }
    Long from = time(p, "from");
    Long to = time(p, "to");
    if (from != null && to != null && from >= to) {
      throw TxException.invalid("to", "must be after from");
    }
    int limit = limit(p, 50, MAX_LIMIT);
    Long afterCreated = null;
    String afterTx = null;
    if (p.containsKey("cursor")) {
      String c = p.get("cursor");
      try {
        String text = new String(Base64.getUrlDecoder().decode(c), StandardCharsets.UTF_8);
        int colon = text.indexOf(':');
        afterCreated = Long.parseLong(text.substring(0, colon));
        afterTx = text.substring(colon + 1);
        if (!Ids.isTxId(afterTx)) {
          throw new IllegalArgumentException();
        }
      } catch (RuntimeException e) {
        throw TxException.invalid("cursor", "not a cursor this search gave out (pass next from the last page as is)");
      }
    }
    String q = p.containsKey("q") ? nonEmpty(p, "q") : null;
    if (q != null && q.length() > 200) {
      throw TxException.invalid("q", "at most 200 characters");
    }
    return new Query(owner, p.containsKey("pipeline") ? nonEmpty(p, "pipeline") : null, phases,
        p.containsKey("externalId") ? nonEmpty(p, "externalId") : null, from, to, q, limit, afterCreated, afterTx);
  }

  private static String nonEmpty(Map<String, String> p, String name) {
    String v = p.get(name);
    if (v == null || v.isBlank()) {
      throw TxException.invalid(name, "empty: leave it out to match any");
    }
    return v;
  }

  /** The limit parameter: a whole number from 1 to max, or the fallback when absent. */
  public static int limit(Map<String, String> p, int fallback, int max) {
    if (!p.containsKey("limit")) {
      return fallback;
    }
    int limit;
    try {
      limit = Integer.parseInt(p.get("limit"));
    } catch (NumberFormatException e) {
      limit = -1;
    }
    if (limit < 1 || limit > max) {
      throw TxException.invalid("limit", "expected a whole number from 1 to " + max + ", got " + p.get("limit"));
    }
    return limit;
  }

  /** An ISO-8601 instant (2026-11-25T08:00:00Z) or ms since the epoch; null when absent. */
  public static Long time(Map<String, String> p, String name) {
    String v = p.get(name);
    if (v == null) {
      return null;
    }
    try {
      return v.matches("\\d{1,15}") ? Long.parseLong(v) : Instant.parse(v).toEpochMilli();
    } catch (DateTimeParseException e) {
      throw TxException.invalid(name, "expected an ISO-8601 time such as 2026-11-25T08:00:00Z, or ms since the "
          + "epoch, got " + v);
    }
  }

  /**
   * A page: {transactions: [summary, …], next: cursor or null, partial, scannedTo}. It holds limit matches, or every
   * match there is (next null); only when the time budget runs out first is it short with a next, and then partial
   * is true and scannedTo (ISO-8601) says how far down the walk looked, so nobody reads "none" from it.
   */
  public Future<JsonObject> run(Query q) {
    List<String> statuses = q.phases().stream().filter(FINAL::contains).toList();
    boolean askArchive = archive != null && (q.phases().isEmpty() || !statuses.isEmpty());
    SearchWalk walk = new SearchWalk(reads, keys.all(), indexes(q.phases()), askArchive ? archive : null, statuses, q,
        perCall);
    return walk.run(ticker, ticker.nanos() + budget.toNanos()).compose(page -> summaries(page.hits()).map(rows -> {
      JsonObject out = new JsonObject().put("transactions", rows)
          .put("next", page.next() == null ? null : cursor(page.next())).put("partial", page.partial());
      if (page.scannedTo() != null) {
        out.put("scannedTo", Instant.ofEpochMilli(page.scannedTo().created()).toString());
      }
      return out;
    }));
  }

  /**
   * What each partition's walk reads for these phases: the phase indexes that hold them all, when every phase
   * asked for has one; else liveZ.
   */
  static List<SearchWalk.Index> indexes(Set<String> phases) {
    if (phases.isEmpty() || !INDEXED.keySet().containsAll(phases)) {
      return List.of(new SearchWalk.Index(null, Set.of(), phases));
    }
    Map<String, Set<String>> asked = new java.util.TreeMap<>();
    phases.forEach(ph -> asked.computeIfAbsent(INDEXED.get(ph), n -> new TreeSet<>()).add(ph));
    List<SearchWalk.Index> out = new ArrayList<>();
    asked.forEach((name, some) -> out.add(new SearchWalk.Index(name, HELD.get(name), some)));
    return out;
  }

  private static String cursor(SearchWalk.Hit h) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString((h.created() + ":" + h.txId())
        .getBytes(StandardCharsets.UTF_8));
  }

  /** Each hit as the API shows a transaction, with its phase; a live one gone meanwhile is read from the archive. */
  private Future<JsonArray> summaries(List<SearchWalk.Hit> page) {
    List<Future<JsonObject>> each = new ArrayList<>();
    for (SearchWalk.Hit h : page) {
      Future<TxSummary> s = h.archived() != null ? reads.opened(h.archived().summary())
          : reads.getState(h.txId()).compose(live -> live != null || archive == null ? Future.succeededFuture(live)
              : archive.find(h.txId()).compose(a -> reads.opened(a == null ? null : a.summary())));
      each.add(s.map(summary -> summary == null ? null : summary.toJson().put("phase", h.phase())));
    }
    return Future.all(each).map(all -> {
      JsonArray out = new JsonArray();
      each.forEach(f -> {
        if (f.result() != null) {
          out.add(f.result());
        }
      });
      return out;
    });
  }
}
