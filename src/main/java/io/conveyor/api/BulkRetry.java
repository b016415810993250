package io.conveyor.api;

import io.conveyor.database.ArchiveStore;
import io.conveyor.model.TxException;
import io.conveyor.redis.ReadStore;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An operator runs again every transaction of a pipeline that ended with a status (failed by default) within
 * a time range: those Redis still holds and those archived, each as its owner's retry would (so one that runs
 * again already is refused, not run twice). Query: since (required), until (default now), status, from
 * (failed or start), limit (default 1000, at most 10000). rerun runs one transaction of any owner again (txId,
 * from start?), as the admin retry route does.
 */
record BulkRetry(java.util.function.BiFunction<String, Boolean, Future<?>> rerun, ReadStore reads, ArchiveStore archive,
                 long archiveDelay, Clock clock) {
  private static final Logger log = LoggerFactory.getLogger(BulkRetry.class);
  private static final Set<String> STATUSES = Set.of("failed", "cancelled", "timeout", "internal-error");
  private static final int CHUNK = 50;

  /** What was asked for, checked. */
  private record Ask(String pipeline, String status, long since, long until, boolean fromStart, int limit) {
  }

  Future<JsonObject> run(String pipeline, MultiMap q) {
    Ask ask;
    try {
      ask = ask(pipeline, q);
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
    Future<List<String>> archived = archive == null ? Future.succeededFuture(List.of())
        : archive.ended(ask.pipeline(), ask.status(), ask.since(), ask.until(), ask.limit());
    return Future.all(reads.ended(ask.pipeline(), ask.status(), ask.since(), ask.until(), archiveDelay, ask.limit()),
            archived)
        .compose(both -> {
          Set<String> ids = new LinkedHashSet<>(both.<List<String>>resultAt(0));
          ids.addAll(both.<List<String>>resultAt(1));
          List<String> matched = ids.stream().limit(ask.limit()).toList();
          log.info("bulk retry of {} ({} between {} and {}): {} to run again", ask.pipeline(), ask.status(),
              Instant.ofEpochMilli(ask.since()), Instant.ofEpochMilli(ask.until()), matched.size());
          return rerun(ask, matched, 0, new JsonObject().put("retried", 0).put("refused", new JsonArray()));
        });
  }

  /** Runs the matched transactions again, a chunk at a time, logging progress on long work. */
  private Future<JsonObject> rerun(Ask ask, List<String> ids, int from, JsonObject out) {
    if (from >= ids.size()) {
      return Future.succeededFuture(out.put("pipeline", ask.pipeline()).put("status", ask.status())
          .put("since", Instant.ofEpochMilli(ask.since()).toString())
          .put("until", Instant.ofEpochMilli(ask.until()).toString()).put("matched", ids.size())
          .put("limitReached", ids.size() >= ask.limit()));
    }
    List<Future<Void>> chunk = new ArrayList<>();
    for (String id : ids.subList(from, Math.min(ids.size(), from + CHUNK))) {
      chunk.add(rerun.apply(id, ask.fromStart()).transform(ar -> {
        if (ar.succeeded()) {
          out.put("retried", out.getInteger("retried") + 1);
        } else {
          JsonArray refused = out.getJsonArray("refused");
          if (refused.size() < 100) {
            refused.add(new JsonObject().put("txId", id).put("detail", ar.cause().getMessage()));
          }
        }
        return Future.<Void>succeededFuture();
      }));
    }
    return Future.join(chunk).transform(v -> {
      int done = Math.min(ids.size(), from + CHUNK);
      if (done % 1000 < CHUNK && done < ids.size()) {
        log.info("bulk retry of {}: {} of {} done", ask.pipeline(), done, ids.size());
      }
      return rerun(ask, ids, done, out);
    });
  }

  private Ask ask(String pipeline, MultiMap q) {
    String status = q.get("status") == null ? "failed" : q.get("status");
    if (!STATUSES.contains(status)) {
      throw TxException.invalid("status", "expected failed, cancelled, timeout or internal-error, got " + status);
    }
    if (q.get("since") == null) {
      throw TxException.invalid("since", "is required: the earliest completion time (ISO-8601, e.g. "
          + "2026-11-24T00:00:00Z)");
    }
    long since = instant(q.get("since"), "since");
    long until = q.get("until") == null ? clock.millis() : instant(q.get("until"), "until");
    if (until <= since) {
      throw TxException.invalid("until", "must come after since");
    }
    String from = q.get("from") == null ? "failed" : q.get("from");
    if (!from.equals("failed") && !from.equals("start")) {
      throw TxException.invalid("from", "expected failed (the default) or start, got " + from);
    }
    int limit;
    try {
      limit = q.get("limit") == null ? 1000 : Integer.parseInt(q.get("limit"));
    } catch (NumberFormatException e) {
      limit = -1;
    }
    if (limit < 1 || limit > 10_000) {
      throw TxException.invalid("limit", "expected a whole number from 1 to 10000");
    }
    return new Ask(pipeline, status, since, until, from.equals("start"), limit);
  }

  private static long instant(String text, String field) {
    try {
      return Instant.parse(text).toEpochMilli();
    } catch (DateTimeParseException e) {
      throw TxException.invalid(field, "expected an ISO-8601 time such as 2026-11-24T00:00:00Z, got " + text);
    }
  }
}
