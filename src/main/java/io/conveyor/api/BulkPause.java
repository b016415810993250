package io.conveyor.api;

import io.conveyor.domain.Pauses;
import io.conveyor.domain.Search;
import io.conveyor.model.TxException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pauses (or resumes) every transaction a search matches (the transaction search's parameters: status, pipeline,
 * externalId, from, to, q, and owner on the admin route), page after page, each as its own pause would, at most
 * limit of them (default 1000, at most 10000). status defaults to every live phase (pause) or paused (resume); a
 * pause names at least one of status, pipeline, externalId, from, to or q.
 * The answer counts what was matched, paused or resumed, and what was refused (the first 100, with why).
 */
record BulkPause(Search search, Pauses pauses) {
  private static final Logger log = LoggerFactory.getLogger(BulkPause.class);
  private static final String LIVE = "queued,running,sleeping,waiting,retrying,scheduled";
  private static final int PAGE = 100;
  /** The parameters that narrow a bulk pause (owner alone does not: on the admin route it is still everything). */
  private static final List<String> NARROWING = List.of("status", "pipeline", "externalId", "from", "to", "q");
  static final int MAX = 10_000;

  /** forcedOwner: the client's own (its transactions only), or null (admin: any owner's, or ?owner=…). */
  Future<JsonObject> run(Map<String, String> params, String forcedOwner, String by, boolean resume, Pauses.Ask ask) {
    Map<String, String> q = new LinkedHashMap<>(params);
    int limit;
    try {
      for (Map.Entry<String, String> e : q.entrySet()) {
        if (e.getValue() == null) {
          throw TxException.invalid(e.getKey(), "given more than once");
        }
        if (!Search.params().contains(e.getKey()) || e.getKey().equals("cursor")) {
          throw TxException.invalid(e.getKey(), "unknown search parameter" + io.conveyor.model.Strict.suggestion(
              e.getKey(), Search.params()) + "; a bulk pause or resume walks every page itself (no cursor)");
        }
      }
      // a pause with nothing to narrow it would stop every live transaction of the caller (of every owner, on the
      // admin route): a typo that drops the query must not do that, so it needs one filter, status at least
      if (!resume && q.keySet().stream().noneMatch(NARROWING::contains)) {
        throw TxException.invalid("status", "a bulk pause needs at least one of " + NARROWING
            + " (to pause every live transaction, say so: status=" + LIVE + ")");
      }
      limit = Search.limit(q, 1000, MAX);
      q.remove("limit");
      q.putIfAbsent("status", resume ? "paused" : LIVE);
      q.put("limit", Integer.toString(PAGE));
      Search.parse(q, forcedOwner); // refuses a bad parameter before anything is done
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
    String done = resume ? "resumed" : "paused";
    JsonObject out = new JsonObject().put("matched", 0).put(done, 0).put("refused", new JsonArray());
    return page(q, forcedOwner, by, resume, ask, limit, out, done).map(v -> {
      log.info("bulk {} by {} ({}): {} matched, {} {}", resume ? "resume" : "pause", by, params,
          out.getInteger("matched"), out.getInteger(done), done);
      return out.put("limitReached", out.getInteger("matched") >= limit);
    });
  }

  /** One page of the search, each hit paused or resumed, then the next page, until none or limit. */
  private Future<Void> page(Map<String, String> q, String forcedOwner, String by, boolean resume, Pauses.Ask ask,
                            int limit, JsonObject out, String done) {
    return search.run(Search.parse(q, forcedOwner)).compose(found -> {
      List<Future<Void>> each = new ArrayList<>();
      for (Object o : found.getJsonArray("transactions")) {
        JsonObject t = (JsonObject) o;
        if (out.getInteger("matched") >= limit) {
          break;
        }
        out.put("matched", out.getInteger("matched") + 1);
        String txId = t.getString("txId");
        Future<?> act = resume ? pauses.resume(txId, t.getString("owner"), by, ask)
            : pauses.pause(txId, t.getString("owner"), by, ask);
        each.add(act.transform(ar -> {
          if (ar.succeeded()) {
            out.put(done, out.getInteger(done) + 1);
          } else if (out.getJsonArray("refused").size() < 100) {
            out.getJsonArray("refused").add(new JsonObject().put("txId", txId).put("detail", ar.cause().getMessage()));
          }
          return Future.<Void>succeededFuture();
        }));
      }
      String next = found.getString("next");
      return Future.join(each).transform(v -> {
        if (next == null || out.getInteger("matched") >= limit) {
          return Future.<Void>succeededFuture();
        }
        q.put("cursor", next);
        return page(q, forcedOwner, by, resume, ask, limit, out, done);
      });
    });
  }
}
