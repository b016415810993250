package io.conveyor.domain;

import io.conveyor.config.Names;
import io.conveyor.database.ArchiveQuery;
import io.conveyor.database.ArchiveStore;
import io.conveyor.database.ArchivedTx;
import io.conveyor.model.Ids;
import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.Keys;
import io.conveyor.redis.ReadStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
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
  /** Phases a search may ask for: where a live transaction stands, or its final status. */
  public static final Set<String> PHASES = Set.of("queued", "running", "sleeping", "waiting", "retrying",
      "scheduled", "success", "failed", "aborted", "cancelled", "timeout", "internal-error");
  private static final Set<String> FINAL = Set.of("success", "failed", "aborted", "cancelled", "timeout",
      "internal-error");
  /** Entries of one partition's index looked at per page at most (a rare filter over a deep backlog). */
  static final int LIVE_BUDGET = 20_000;
  public static final int MAX_LIMIT = 500;
  private static final Set<String> PARAMS = Set.of("status", "pipeline", "owner", "externalId", "from", "to", "q",
      "limit", "cursor");

  private final ReadStore reads;
  private final Keys keys;
  private final ArchiveStore archive;
  private final int liveBudget;

  public Search(ReadStore reads, Keys keys, ArchiveStore archive) {
    this(reads, keys, archive, LIVE_BUDGET);
  }

  /** With liveBudget entries looked at per partition and page (a test makes it small to stop walks early). */
  public Search(ReadStore reads, Keys keys, ArchiveStore archive, int liveBudget) {
    this.reads = reads;
    this.keys = keys;
    this.archive = archive;
    this.liveBudget = liveBudget;
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

  /** One found transaction: its sort key, its phase, and either its txId to read (live) or its archived row. */
  private record Hit(long created, String txId, String phase, ArchivedTx archived) {
  }

  private static final Comparator<Hit> NEWEST_FIRST = Comparator.comparingLong(Hit::created)
      .thenComparing(Hit::txId).reversed();

  /** What one source answered: its hits, and where it stopped looking (null: it has nothing more). */
  private record Part(List<Hit> hits, Hit stop) {
  }

  /** A page: {transactions: [summary, …], next: cursor or null}. */
  public Future<JsonObject> run(Query q) {
    int want = q.limit() + 1;
    List<Future<Part>> parts = new ArrayList<>();
    for (int p : keys.all()) {
      parts.add(reads.search(p, q.owner(), q.pipeline(), q.phases(), q.externalId(), q.text(), q.from(), q.to(),
          q.afterCreated(), q.afterTx(), want, liveBudget).map(found -> {
            List<Hit> hits = new ArrayList<>();
            found.matches().forEach(m -> hits.add(new Hit(m.created(), m.txId(), m.phase(), null)));
            return new Part(hits, found.nextCreated() == null ? null
                : new Hit(found.nextCreated(), found.nextTx(), null, null));
          }));
    }
    List<String> statuses = q.phases().stream().filter(FINAL::contains).toList();
    if (archive != null && (q.phases().isEmpty() || !statuses.isEmpty())) {
      parts.add(archive.search(new ArchiveQuery(q.owner(), q.pipeline(), statuses, q.externalId(), q.from(), q.to(),
          q.text(), q.afterCreated(), q.afterTx(), want)).map(found -> {
            List<Hit> hits = new ArrayList<>();
            found.rows().forEach(t -> hits.add(new Hit(t.created(), t.txId(), t.status(), t)));
            return new Part(hits, found.rowsLooked() < want ? null : new Hit(found.lastCreated(), found.lastTx(),
                null, null));
          }));
    }
    return Future.all(parts).compose(all -> {
      Hit cutoff = null;
      Map<String, Hit> byId = new LinkedHashMap<>();
      for (Future<Part> f : parts) {
        Part part = f.result();
        // the newest stop: below it, the source that stopped there may hold what the page would need
        if (part.stop() != null && (cutoff == null || NEWEST_FIRST.compare(part.stop(), cutoff) < 0)) {
          cutoff = part.stop();
        }
        // a transaction archived while it is still in Redis is found twice: the live one is the newer copy
        part.hits().forEach(h -> byId.merge(h.txId(), h, (a, b) -> a.archived() == null ? a : b));
      }
      List<Hit> sorted = new ArrayList<>(byId.values());
      sorted.sort(NEWEST_FIRST);
      List<Hit> page = new ArrayList<>();
      boolean moreFound = false;
      for (Hit h : sorted) {
        if (cutoff != null && NEWEST_FIRST.compare(h, cutoff) > 0) {
          break; // below where a source stopped looking: it may have missed one above this
        }
        if (page.size() == q.limit()) {
          moreFound = true;
          break;
        }
        page.add(h);
      }
      String next;
      if (page.size() == q.limit() && (moreFound || cutoff != null)) {
        next = cursor(page.get(page.size() - 1));
      } else if (cutoff != null) {
        next = cursor(cutoff); // everything down to the stop is in this page; the rest is below it
      } else {
        next = null;
      }
      return summaries(page).map(rows -> new JsonObject().put("transactions", rows).put("next", next));
    });
  }

  private static String cursor(Hit h) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString((h.created() + ":" + h.txId())
        .getBytes(StandardCharsets.UTF_8));
  }

  /** Each hit as the API shows a transaction, with its phase; a live one gone meanwhile is read from the archive. */
  private Future<JsonArray> summaries(List<Hit> page) {
    List<Future<JsonObject>> each = new ArrayList<>();
    for (Hit h : page) {
      Future<TxSummary> s = h.archived() != null ? Future.succeededFuture(h.archived().summary())
          : reads.getState(h.txId()).compose(live -> live != null || archive == null ? Future.succeededFuture(live)
              : archive.find(h.txId()).map(a -> a == null ? null : a.summary()));
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
