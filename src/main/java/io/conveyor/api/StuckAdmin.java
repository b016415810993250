package io.conveyor.api;

import io.conveyor.model.TxException;
import io.conveyor.redis.StuckStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import java.util.Map;

/**
 * GET /api/v1/admin/stuck (admin role, across owners like the other admin views): the transactions the reaper
 * leaders list as stuck (see stuck.lua), with the counts by reason; reason and owner filter, a page holds up to
 * limit and next goes back as cursor.
 */
public record StuckAdmin(StuckStore store) implements RouteGroup {
  static final int MAX_LIMIT = 1000;

  @Override
  public void mount(Router r) {
    r.get("/api/v1/admin/stuck").handler(ctx -> HttpIo.json(ctx, view(HttpIo.params(ctx))));
  }

  /** {counts: {reason: n}, stuck: [{txId, reason, since, owner, type, …}], next}. */
  Future<JsonObject> view(Map<String, String> p) {
    try {
      for (Map.Entry<String, String> e : p.entrySet()) {
        if (e.getValue() == null || e.getValue().isBlank()) {
          throw TxException.invalid(e.getKey(), e.getValue() == null ? "given more than once" : "empty: leave it out");
        }
      }
      String reason = p.get("reason");
      if (reason != null && !StuckStore.REASONS.contains(reason)) {
        throw TxException.invalid("reason", "expected one of " + String.join(", ", StuckStore.REASONS) + ", got "
            + reason);
      }
      String cursor = p.get("cursor");
      if (cursor != null && !cursor.matches("\\d{1,6}-\\d{1,20}")) {
        throw TxException.invalid("cursor", "expected the next of an earlier answer (PARTITION-POSITION), got "
            + cursor);
      }
      int limit = limit(p.get("limit"));
      Future<Map<String, Long>> counts = store.counts();
      Future<StuckStore.Page> page = store.list(reason, p.get("owner"), cursor, limit);
      return Future.all(counts, page).map(v -> new JsonObject().put("counts", new JsonObject(
              new java.util.LinkedHashMap<>(counts.result())))
          .put("stuck", new JsonArray(page.result().items())).put("next", page.result().next()));
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
  }

  private static int limit(String text) {
    try {
      int n = text == null ? 100 : Integer.parseInt(text);
      if (n >= 1 && n <= MAX_LIMIT) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw TxException.invalid("limit", "expected a whole number from 1 to " + MAX_LIMIT + ", got " + text);
  }
}
