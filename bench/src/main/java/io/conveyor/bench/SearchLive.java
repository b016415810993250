package io.conveyor.bench;

import io.conveyor.domain.Search;
import io.conveyor.domain.Transactions;
import io.conveyor.redis.Keys;
import io.conveyor.redis.ReadStore;
import io.conveyor.redis.RedisLink;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The live half of bench/search: fills Redis (a prefix of its own) with N live transactions of 20 pipelines,
 * written as the scripts leave them (stateH, liveZ, and phaseZ:ended for the failed ones, one in failedEvery),
 * then times the first page of a failed-only search of one pipeline through Search (live and archive, as the
 * API runs it), and the same page from a walk of liveZ alone, as every search was answered before the indexes.
 */
final class SearchLive {
  private SearchLive() {
  }

  static JsonObject run(Vertx vertx, Transactions tx, int live, int failedEvery, int queries) {
    RedisLink link = tx.context().link();
    Keys keys = tx.context().keys();
    long t0 = System.nanoTime();
    long now = System.currentTimeMillis();
    List<Integer> parts = keys.all();
    int chunk = 2_000;
    for (int from = 0; from < live; from += chunk) {
      List<Request> batch = new ArrayList<>();
      for (int g = from; g < Math.min(live, from + chunk); g++) {
        // one a millisecond, newest last: the failed ones spread evenly among them and over the pipelines
        long created = now - live + g;
        boolean failed = g % failedEvery == failedEvery / 2;
        String txId = keys.newTxId(parts.get(g % parts.size()));
        int p = keys.partitionOf(txId);
        batch.add(Request.cmd(Command.HSET).arg(keys.stateH(txId)).arg("owner").arg("owner-" + (g % 1000))
            .arg("type").arg("pipeline-" + ((g * 31 + g / 1000) % 20)).arg("group").arg("master").arg("version").arg("1")
            .arg("status").arg(failed ? "failed" : "running").arg("processingState")
            .arg(failed ? "complete" : "queued").arg("attempt").arg("1").arg("created").arg(created)
            .arg("updated").arg(created).arg("metadata").arg("{\"order\":" + g + "}"));
        batch.add(Request.cmd(Command.ZADD).arg(keys.liveZ(p)).arg(created).arg(txId));
        if (failed) {
          batch.add(Request.cmd(Command.ZADD).arg(keys.phaseZ(p, "ended")).arg(created).arg(txId));
        }
      }
      link.batch(batch).await();
      if ((from / chunk) % 50 == 0) {
        System.err.printf("search bench: %,d of %,d live written%n", Math.min(live, from + chunk), live);
      }
    }
    long fill = (System.nanoTime() - t0) / 1_000_000;
    Search search = new Search(new ReadStore(tx.context()), keys, tx.archive().await());
    ReadStore reads = new ReadStore(tx.context());
    List<Long> indexed = new ArrayList<>();
    List<Long> scanned = new ArrayList<>();
    int found = 0;
    int scanFound = 0;
    for (int q = 0; q < queries; q++) {
      String pipeline = "pipeline-" + (q % 20);
      long a = System.nanoTime();
      JsonObject page = search.run(Search.parse(Map.of("status", "failed", "pipeline", pipeline, "limit", "50"),
          null)).await();
      indexed.add(System.nanoTime() - a);
      found += page.getJsonArray("transactions").size();
      if (q < 10) {
        a = System.nanoTime();
        scanFound += scan(reads, parts, pipeline);
        scanned.add(System.nanoTime() - a);
      }
    }
    return new JsonObject().put("live", live).put("failedEvery", failedEvery).put("liveFillMs", fill)
        .put("failedOfPipelineFirstPage", SearchBench.stats(indexed)).put("pageRows", found)
        .put("liveScanFirstPage", SearchBench.stats(scanned)).put("scanRows", scanFound);
  }

  /** The live half of that page from liveZ, 5,000 entries a call per partition, until 51 match or all is seen. */
  private static int scan(ReadStore reads, List<Integer> parts, String pipeline) {
    int total = 0;
    for (int p : parts) {
      Long before = null;
      String beforeTx = null;
      int here = 0;
      while (here < 51) {
        ReadStore.LiveFound f = reads.search(p, null, Set.of(), null, pipeline, Set.of("failed"), null, null, null,
            null, before, beforeTx, 51 - here, Search.PER_CALL).await();
        here += f.matches().size();
        if (f.nextCreated() == null) {
          break;
        }
        before = f.nextCreated();
        beforeTx = f.nextTx();
      }
      total += here;
    }
    return total;
  }

  /** Every key under the bench's prefix goes. */
  static Future<Long> clean(Vertx vertx, Transactions tx, String prefix) {
    return RedisChores.deletePrefix(tx.context().link(), vertx, prefix);
  }
}
