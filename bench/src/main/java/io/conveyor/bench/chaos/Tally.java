package io.conveyor.bench.chaos;

import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The end of a run: every externalId the load started, looked up by externalId over HTTP until it is final
 * or the bound passes. Lost = never acknowledged, not found, or never final.
 */
final class Tally {
  final Map<String, JsonObject> byExternalId = new ConcurrentHashMap<>();
  final Map<String, Integer> statuses = new TreeMap<>();
  int started;
  int unacked;
  int notFound;
  int unfinished;
  int success;
  int failed;
  int internalError;
  /** Of internalError: ended maybe-ran (a step declared not idempotent that a lost node may have run). */
  int maybeRan;
  int webhooksMissing;
  int webhookDuplicates;

  int lost() {
    return unacked + notFound + unfinished;
  }

  /** Waits (bounded, with a progress line) until every acknowledged transaction is final, then counts. */
  static Tally of(Rig rig, SteadyLoad load, long boundMs) {
    Tally t = new Tally();
    t.started = load.started();
    t.unacked = load.pending.size();
    List<String> open = new ArrayList<>(load.acked.keySet());
    long deadline = System.currentTimeMillis() + boundMs;
    long lastProgress = 0;
    while (!open.isEmpty() && System.currentTimeMillis() < deadline) {
      t.read(rig, open);
      open.removeIf(id -> t.isFinal(id));
      if (System.currentTimeMillis() - lastProgress > 5000 && !open.isEmpty()) {
        lastProgress = System.currentTimeMillis();
        System.err.println("chaos:   waiting for " + open.size() + " transactions to finish (e.g. "
            + t.byExternalId.getOrDefault(open.get(0), new JsonObject().put("externalId", open.get(0))).encode() + ")");
      }
      if (!open.isEmpty()) {
        Procs.sleep(1000);
      }
    }
    t.unfinished += (int) load.acked.keySet().stream().filter(id -> !t.byExternalId.containsKey(id)).count();
    t.count(rig);
    return t;
  }

  private boolean isFinal(String externalId) {
    JsonObject s = byExternalId.get(externalId);
    return s != null && s.getString("status") != null && !"running".equals(s.getString("status"));
  }

  /** Reads the summaries, 50 at a time, from the live nodes in turn. */
  private void read(Rig rig, List<String> ids) {
    List<NodeProc> live = rig.live();
    for (int i = 0; i < ids.size(); i += 50) {
      List<Future<?>> batch = new ArrayList<>();
      for (String id : ids.subList(i, Math.min(ids.size(), i + 50))) {
        NodeProc n = live.get(Math.floorMod(id.hashCode(), live.size()));
        batch.add(rig.driver.call(n.httpPort, HttpMethod.GET, "/api/v1/transactions?externalId="
            + URLEncoder.encode(id, StandardCharsets.UTF_8), null, 5000).onSuccess(r -> {
              if (r.ok()) {
                byExternalId.put(id, r.json());
              } else if (r.status() == 404) {
                byExternalId.put(id, new JsonObject().put("status", "not-found"));
              }
            }));
      }
      Future.join(batch).await();
    }
  }

  private void count(Rig rig) {
    for (Map.Entry<String, JsonObject> e : byExternalId.entrySet()) {
      String status = e.getValue().getString("status");
      statuses.merge(status, 1, Integer::sum);
      switch (status) {
        case "not-found" -> notFound++;
        case "running" -> unfinished++;
        case "success" -> success++;
        case "internal-error" -> {
          internalError++;
          io.vertx.core.json.JsonArray errors = e.getValue().getJsonArray("errors");
          if (errors != null && errors.stream().anyMatch(x -> x instanceof JsonObject j
              && "maybe-ran".equals(j.getString("code")))) {
            maybeRan++;
          }
        }
        default -> failed++;
      }
      String txId = e.getValue().getString("txId");
      if ("success".equals(status) && txId != null && !rig.driver.deliveries.containsKey(txId)) {
        webhooksMissing++;
      }
    }
    webhookDuplicates = rig.driver.deliveries.values().stream().mapToInt(a -> Math.max(0, a.get() - 1)).sum();
  }
}
