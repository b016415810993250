package io.conveyor.bench;

import io.conveyor.config.Config;
import io.conveyor.config.ConfigLoader;
import io.conveyor.database.ArchiveQuery;
import io.conveyor.database.ArchiveStore;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The archive search with many rows: fills a fresh table (through the node's own migrations) with N archived
 * transactions of 20 pipelines, 5 statuses and 1,000 owners over 30 days, then times the admin search by
 * pipeline + status + a one-day range, by owner, and with none of them, each a page of 50 as the API asks for
 * it. Prints one JSON line on stdout; progress goes to stderr. See bench/README.md.
 */
public final class SearchBench {
  private SearchBench() {
  }

  static final String USAGE = "usage: bench/search [--rows N] [--live N] [--failed-every K] [--queries Q] [--pg URL]"
      + " [--keep]";

  public static void main(String[] args) throws Exception {
    PrintStream out = System.out;
    System.setOut(System.err);
    int rows = 1_000_000;
    int queries = 200;
    String pg = "postgresql://postgres@127.0.0.1:5432/test";
    boolean keep = false;
    int live = 0;
    int failedEvery = 1000;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rows" -> rows = Integer.parseInt(args[++i]);
        case "--queries" -> queries = Integer.parseInt(args[++i]);
        case "--pg" -> pg = args[++i];
        case "--keep" -> keep = true;
        case "--live" -> live = Integer.parseInt(args[++i]);
        case "--failed-every" -> failedEvery = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i] + " (" + USAGE + ")");
      }
    }
    String table = "bench_search_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    String prefix = "bench-search-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()) + ":";
    Config config = ConfigLoader.load(null, Map.of("CONVEYOR_ARCHIVE_URL", pg, "CONVEYOR_ARCHIVE_TABLE", table,
        "CONVEYOR_REDIS_PREFIX", prefix, "CONVEYOR_REDIS_EMBEDDED", "never"));
    Vertx vertx = Vertx.vertx();
    ArchiveStore archive = ArchiveStore.forConfig(vertx, config.archive(), config.security().archiveTls());
    archive.open().await();
    PgConnectOptions options = PgConnectOptions.fromUri(pg.replaceFirst("^postgres://", "postgresql://"));
    Pool pool = PgBuilder.pool().connectingTo(options).using(vertx).build();
    long day = 86_400_000L;
    long end = System.currentTimeMillis();
    long start = end - 30 * day;
    try {
      long t0 = System.nanoTime();
      int chunk = 100_000;
      for (int from = 0; from < rows; from += chunk) {
        int to = Math.min(rows, from + chunk);
        // rows made in SQL: the state JSON as the archive keeps it, spread evenly over the 30 days
        pool.query("INSERT INTO " + table + " (tx_id, owner, external_id, type, status, created, completed, state,"
            + " archived) SELECT 'tx-' || lpad(to_hex(g), 32, '0'), 'owner-' || (g % 1000), 'ext-' || g,"
            + " 'pipeline-' || (g % 20), (ARRAY['success','success','success','failed','cancelled'])[1 + g % 5],"
            + " to_timestamp((" + start + " + g::bigint * " + (30 * day / rows) + ") / 1000.0),"
            + " to_timestamp((" + start + " + g::bigint * " + (30 * day / rows) + " + 50) / 1000.0),"
            + " jsonb_build_object('owner', 'owner-' || (g % 1000), 'type', 'pipeline-' || (g % 20), 'status',"
            + " (ARRAY['success','success','success','failed','cancelled'])[1 + g % 5], 'created', ("
            + start + " + g::bigint * " + (30 * day / rows) + ")::text, 'metadata', '{\"order\":' || g || '}',"
            + " 'processingState', 'complete', 'attempt', '1', 'updated', (" + start + " + g::bigint * "
            + (30 * day / rows) + " + 50)::text), now()"
            + " FROM generate_series(" + from + ", " + (to - 1) + ") g").execute().await();
        System.err.printf("search bench: %,d of %,d rows written%n", to, rows);
      }
      pool.query("ANALYZE " + table).execute().await();
      long fill = (System.nanoTime() - t0) / 1_000_000;
      List<Long> byPipeline = new ArrayList<>();
      List<Long> byOwner = new ArrayList<>();
      List<Long> newest = new ArrayList<>();
      List<Long> text = new ArrayList<>();
      List<Long> textAlone = new ArrayList<>();
      int found = 0;
      for (int q = 0; q < queries; q++) {
        int pipe = q % 20;
        long dayStart = start + (q % 29) * day;
        long a = System.nanoTime();
        found += archive.search(new ArchiveQuery(null, "pipeline-" + pipe, List.of("failed"), null, dayStart,
            dayStart + day, null, null, null, 51)).await().rows().size();
        byPipeline.add(System.nanoTime() - a);
        a = System.nanoTime();
        archive.search(new ArchiveQuery("owner-" + (q * 7 % 1000), null, List.of(), null, null, null, null, null,
            null, 51)).await();
        byOwner.add(System.nanoTime() - a);
        a = System.nanoTime();
        archive.search(new ArchiveQuery(null, null, List.of(), null, null, null, null, null, null, 51)).await();
        newest.add(System.nanoTime() - a);
        a = System.nanoTime();
        archive.search(new ArchiveQuery(null, "pipeline-" + pipe, List.of("failed"), null, dayStart, dayStart + day,
            "\"order\":" + (q * 997 % rows), null, null, 51)).await();
        text.add(System.nanoTime() - a);
        if (q < 10) {
          // text alone: no index narrows it (a scan of the rows newest first until a page is full, or all of them)
          a = System.nanoTime();
          archive.search(new ArchiveQuery(null, null, List.of(), null, null, null, "\"order\":" + (q * 997 % rows),
              null, null, 51)).await();
          textAlone.add(System.nanoTime() - a);
        }
      }
      io.vertx.core.json.JsonObject result = new io.vertx.core.json.JsonObject().put("rows", rows).put("fillMs", fill)
          .put("queries", queries).put("pipelineStatusDay", stats(byPipeline)).put("owner", stats(byOwner))
          .put("newest", stats(newest)).put("pipelineStatusDayText", stats(text)).put("textAlone", stats(textAlone))
          .put("rowsFound", found);
      if (live > 0) {
        // the whole search (live and this archive) as the API runs it, over a Redis prefix of its own
        io.conveyor.domain.Transactions tx = io.conveyor.ClientRoot.transactions(vertx, config);
        try {
          result.put("liveSearch", SearchLive.run(vertx, tx, live, failedEvery, queries));
        } finally {
          if (!keep) {
            SearchLive.clean(vertx, tx, prefix).await();
          }
          tx.close().await();
        }
      }
      out.println(result.encode());
    } finally {
      if (!keep) {
        pool.query("DROP TABLE IF EXISTS " + table).execute().await();
        pool.query("DROP TABLE IF EXISTS " + table + "_schema_history").execute().await();
      }
      pool.close().await();
      archive.close().await();
      vertx.close().await();
    }
  }

  static io.vertx.core.json.JsonObject stats(List<Long> nanos) {
    List<Long> s = new ArrayList<>(nanos);
    s.sort(null);
    return new io.vertx.core.json.JsonObject().put("p50Ms", s.get(s.size() / 2) / 1e6)
        .put("p99Ms", s.get(Math.min(s.size() - 1, (int) (s.size() * 0.99))) / 1e6)
        .put("maxMs", s.get(s.size() - 1) / 1e6);
  }
}
