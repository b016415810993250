package io.conveyor.bench.chaos;

import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The end of a redis-cluster run: every acknowledged start read back (by txId, or by externalId when a 409 gave
 * none) until it is final or the bound passes. Lost = acknowledged, then 404 or never final.
 */
final class ClusterTally {
  /** Summaries by the start's seq; a 404 is {"status":"not-found"}. */
  final Map<Integer, JsonObject> bySeq = new ConcurrentHashMap<>();
  final Map<String, Integer> statuses = new TreeMap<>();
  int failed;
  int internalError;
  int notFound;
  int unfinished;

  static ClusterTally of(Rig rig, Collection<PartitionLoad.Start> starts, int partitions, long boundMs) {
    ClusterTally t = new ClusterTally();
    List<PartitionLoad.Start> open = new ArrayList<>(starts.stream().filter(PartitionLoad.Start::ok).toList());
    long deadline = System.currentTimeMillis() + boundMs;
    long lastProgress = System.currentTimeMillis();
    while (!open.isEmpty() && System.currentTimeMillis() < deadline) {
      t.read(rig, open);
      open.removeIf(t::isFinal);
      if (!open.isEmpty() && System.currentTimeMillis() - lastProgress > 5000) {
        lastProgress = System.currentTimeMillis();
        System.err.println("chaos:   waiting for " + open.size() + " transactions to finish");
      }
      if (!open.isEmpty()) {
        Procs.sleep(1000);
      }
    }
    for (PartitionLoad.Start s : starts) {
      if (!s.ok()) {
        continue;
      }
      JsonObject j = t.bySeq.get(s.seq);
      String status = j == null ? "unread" : j.getString("status", "?");
      t.statuses.merge(status, 1, Integer::sum);
      switch (status) {
        case "success" -> { }
        case "not-found" -> t.notFound++;
        case "running", "unread" -> t.unfinished++;
        case "internal-error" -> t.internalError++;
        default -> t.failed++;
      }
      if (s.txId.isEmpty() && j != null && j.getString("txId") != null) {
        s.txId = j.getString("txId");
      }
    }
    return t;
  }

  int lost() {
    return notFound + unfinished;
  }

  private boolean isFinal(PartitionLoad.Start s) {
    JsonObject j = bySeq.get(s.seq);
    return j != null && j.getString("status") != null && !"running".equals(j.getString("status"));
  }

  /** Reads the summaries, 50 at a time, from the nodes in turn. */
  private void read(Rig rig, List<PartitionLoad.Start> starts) {
    List<NodeProc> live = rig.live();
    for (int i = 0; i < starts.size(); i += 50) {
      List<Future<?>> batch = new ArrayList<>();
      for (PartitionLoad.Start s : starts.subList(i, Math.min(starts.size(), i + 50))) {
        NodeProc n = live.get(Math.floorMod(s.seq, live.size()));
        String uri = s.txId.isEmpty() ? "/api/v1/transactions?externalId=" + URLEncoder.encode(s.externalId,
            StandardCharsets.UTF_8) : "/api/v1/transactions/" + s.txId;
        batch.add(rig.driver.call(n.httpPort, HttpMethod.GET, uri, null, 5000).onSuccess(r -> {
          if (r.ok()) {
            bySeq.put(s.seq, r.json());
          } else if (r.status() == 404) {
            bySeq.put(s.seq, new JsonObject().put("status", "not-found"));
          }
        }));
      }
      Future.join(batch).await();
    }
  }
}
