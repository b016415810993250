package io.conveyor.domain;

import io.conveyor.database.ArchiveQuery;
import io.conveyor.database.ArchiveStore;
import io.conveyor.database.ArchivedTx;
import io.conveyor.redis.ReadStore;
import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One page of a search, gathered from its sources (each partition's liveZ, and the archive) call after call until
 * the page holds limit matches, or every source has told all it has, or the time budget runs out. Each source
 * keeps where it stopped looking and goes on from there; a page holds only what lies above the newest stop of a
 * source with more to give, so nothing below it can be missing. Made per page, used on one context.
 */
final class SearchWalk {
  /** One found transaction: its sort key, its phase, and either its txId to read (live) or its archived row. */
  record Hit(long created, String txId, String phase, ArchivedTx archived) {
  }

  static final Comparator<Hit> NEWEST_FIRST = Comparator.comparingLong(Hit::created)
      .thenComparing(Hit::txId).reversed();

  /** What a walk gathered: the page, where the next one starts (or null), and whether the budget cut it short. */
  record Page(List<Hit> hits, Hit next, boolean partial, Hit scannedTo) {
  }

  /**
   * What each partition's walk reads: liveZ (index null, phases the query's) or a phase index (Keys.phaseZ) that
   * holds the phases held, asked for the query's phases among them.
   */
  record Index(String index, Set<String> held, Set<String> phases) {
  }

  /** One source: what it found so far, and where it stopped looking (null once it has nothing more). */
  private final class Source {
    private final Integer partition;
    private final Index index;
    private final List<Hit> hits = new ArrayList<>();
    private Hit stop;
    private boolean asked;

    private Source(Integer partition, Index index) {
      this.partition = partition;
      this.index = index;
    }

    private boolean more() {
      return !asked || (stop != null && hits.size() < want);
    }

    private Future<Void> next() {
      Long afterCreated = asked ? Long.valueOf(stop.created()) : q.afterCreated();
      String afterTx = asked ? stop.txId() : q.afterTx();
      asked = true;
      int ask = want - hits.size();
      if (partition == null) {
        return archive.search(new ArchiveQuery(q.owner(), q.pipeline(), statuses, q.externalId(), q.from(), q.to(),
            q.text(), afterCreated, afterTx, ask)).map(found -> {
              found.rows().forEach(t -> hits.add(new Hit(t.created(), t.txId(), t.status(), t)));
              stop = found.rowsLooked() < ask ? null : new Hit(found.lastCreated(), found.lastTx(), null, null);
              return null;
            });
      }
      return reads.search(partition, index.index(), index.held(), q.owner(), q.pipeline(), index.phases(),
          q.externalId(), q.text(), q.from(), q.to(), afterCreated, afterTx, ask, perCall).map(found -> {
            found.matches().forEach(m -> hits.add(new Hit(m.created(), m.txId(), m.phase(), null)));
            stop = found.nextCreated() == null ? null : new Hit(found.nextCreated(), found.nextTx(), null, null);
            return null;
          });
    }
  }

  private final ReadStore reads;
  private final ArchiveStore archive;
  private final Search.Query q;
  private final List<String> statuses;
  private final int want;
  private final int perCall;
  private final List<Source> sources = new ArrayList<>();
  private Source archived;
  private int rounds;

  /**
   * Each partition walks each of indexes; statuses: the final statuses the query asks of the archive; archive
   * null: the archive is not asked.
   */
  SearchWalk(ReadStore reads, List<Integer> partitions, List<Index> indexes, ArchiveStore archive,
             List<String> statuses, Search.Query q, int perCall) {
    this.reads = reads;
    this.archive = archive;
    this.q = q;
    this.statuses = statuses;
    this.want = q.limit() + 1;
    this.perCall = perCall;
    partitions.forEach(p -> indexes.forEach(i -> sources.add(new Source(p, i))));
    if (archive != null) {
      archived = new Source(null, null);
      sources.add(archived);
    }
  }

  /** Walks until the page is full or complete, or the ticker passes deadline (nanos); answers the page. */
  Future<Page> run(Ticker ticker, long deadline) {
    return round().compose(page -> {
      boolean more = sources.stream().anyMatch(Source::more);
      if (page.hits().size() == q.limit() || page.next() == null || !more) {
        return settled(page, false);
      }
      if (ticker.nanos() - deadline >= 0) {
        return settled(page, true);
      }
      return run(ticker, deadline);
    });
  }

  private Future<Page> round() {
    rounds++;
    List<Future<Void>> calls = new ArrayList<>();
    sources.stream().filter(Source::more).forEach(s -> calls.add(s.next()));
    return Future.all(calls).map(all -> page(false));
  }

  /**
   * After more than one round the archive is asked once more from the page's start: a transaction the live walk
   * had not reached yet when it moved to the archive, below where the archive had already looked, is found so.
   */
  private Future<Page> settled(Page page, boolean partial) {
    if (rounds == 1 || archived == null) {
      return Future.succeededFuture(partial ? page(true) : page);
    }
    archived.hits.clear();
    archived.stop = null;
    archived.asked = false;
    return archived.next().map(v -> page(partial));
  }

  private Page page(boolean partial) {
    Hit cutoff = null;
    Map<String, Hit> byId = new LinkedHashMap<>();
    for (Source s : sources) {
      // the newest stop: below it, the source that stopped there may hold what the page would need
      if (s.stop != null && (cutoff == null || NEWEST_FIRST.compare(s.stop, cutoff) < 0)) {
        cutoff = s.stop;
      }
      // a transaction archived while it is still in Redis is found twice: the live one is the newer copy
      s.hits.forEach(h -> byId.merge(h.txId(), h, (a, b) -> a.archived() == null ? a : b));
    }
    List<Hit> sorted = new ArrayList<>(byId.values());
    sorted.sort(NEWEST_FIRST);
    List<Hit> hits = new ArrayList<>();
    boolean moreFound = false;
    for (Hit h : sorted) {
      if (cutoff != null && NEWEST_FIRST.compare(h, cutoff) > 0) {
        break; // below where a source stopped looking: it may have missed one above this
      }
      if (hits.size() == q.limit()) {
        moreFound = true;
        break;
      }
      hits.add(h);
    }
    if (hits.size() == q.limit() && (moreFound || cutoff != null)) {
      return new Page(hits, hits.get(hits.size() - 1), false, null);
    }
    // everything down to the stop is in this page; the rest is below it
    return new Page(hits, cutoff, partial && cutoff != null, partial ? cutoff : null);
  }
}
