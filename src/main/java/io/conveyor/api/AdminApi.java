package io.conveyor.api;

import io.conveyor.database.ArchiveStore;
import io.conveyor.domain.Transactions;
import io.conveyor.model.Ids;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.ControlStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.ReadStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Locale;

/**
 * What the dashboard (and an operator with an admin key) may see and do across owners: lists of
 * transactions in play, sleeping, set aside and recently finished; one transaction in full (its state,
 * its pipeline's steps with where it stands, the events that name it); and cancel, wake, set switch. archive is
 * null on a node without one: then only what Redis holds is found.
 */
public record AdminApi(Transactions tx, ReadStore reads, ControlStore control, PipelineStore pipelines,
                       ArchiveStore archive) {
  /** An operator's view over a Transactions service's own stores (the CLI's). */
  public static AdminApi of(Transactions tx, ArchiveStore archive) {
    return new AdminApi(tx, new ReadStore(tx.context()), new ControlStore(tx.context()),
        new io.conveyor.redis.PipelineStore(tx.context()), archive);
  }

  Future<JsonObject> list(String which, String limit) {
    ReadStore.AdminList list;
    try {
      list = ReadStore.AdminList.valueOf(which == null ? "INPLAY" : which.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(TxException.invalid("list", "expected inplay, sleeping, exceptions or recent"));
    }
    int n;
    try {
      n = limit == null ? 50 : Integer.parseInt(limit);
    } catch (NumberFormatException e) {
      n = -1;
    }
    if (n < 1 || n > 1000) {
      return Future.failedFuture(TxException.invalid("limit", "expected a whole number from 1 to 1000"));
    }
    return reads.adminList(list, n).map(rows -> new JsonObject().put("list", list.name().toLowerCase(Locale.ROOT))
        .put("transactions", rows));
  }

  /** The full state of any owner's transaction, from Redis or, once archived, from the archive. */
  Future<JsonObject> detail(String txId) {
    if (!Ids.isTxId(txId)) {
      return Future.failedFuture(TxException.invalid("txId", "expected tx- and 32 hex digits"));
    }
    return reads.rawState(txId).compose(fields -> fields != null ? Future.succeededFuture(fields)
            : archive == null ? Future.succeededFuture(null)
            : archive.find(txId).compose(a -> a == null ? Future.succeededFuture(null)
                : reads.openedFields(txId, a.state().copy().put("archived", "1"))))
        .compose(fields -> {
          if (fields == null) {
            return Future.failedFuture(new TxException(Kind.NOT_FOUND, "no transaction " + txId, null, txId));
          }
          String owner = fields.getString("owner");
          return Future.all(tx.status(txId, owner), pipelines.pipelineDefinition(fields.getString("type"),
                  fields.getString("version")), reads.eventsAbout(txId), reads.wakeAt(txId))
              .map(all -> {
                TxSummary summary = all.resultAt(0);
                String definition = all.resultAt(1);
                return new JsonObject().put("summary", summary.toJson())
                    .put("archived", "1".equals(fields.getString("archived")))
                    .put("node", fields.getString("node"))
                    .put("input", json(fields.getString("input")))
                    .put("data", json(fields.getString("data")))
                    .put("branches", fields.getString("fork") == null ? null
                        : new JsonObject(fields.getString("fork")).getJsonArray("ids"))
                    // the transactions it is linked to: its parent, the child it waits for, its compensation
                    .put("parent", fields.getString("parentTxId"))
                    .put("child", Ids.isTxId(fields.getString("waitingFor", "")) ? fields.getString("waitingFor") : null)
                    .put("compensationFor", fields.getString("compensationFor"))
                    .put("priority", Integer.parseInt(fields.getString("priority", "0")))
                    .put("switches", json(fields.getString("switches")))
                    .put("steps", steps(definition, fields))
                    .put("attempts", attempts(fields))
                    .put("migrations", migrations(fields))
                    .put("events", all.<JsonArray>resultAt(2))
                    // what it sleeps waiting for: an event (flow/await) or a switch; null otherwise
                    .put("awaiting", Awaiting.of(txId, fields, definition, all.resultAt(3)));
              });
        });
  }

  /**
   * The pipeline's steps (step counts from 1), each marked done, current or pending by the transaction's step
   * field, with its last attempt's time.
   */
  private static JsonArray steps(String definition, JsonObject fields) {
    JsonArray out = new JsonArray();
    if (definition == null) {
      return out;
    }
    JsonArray steps = new JsonObject(definition).getJsonArray("steps", new JsonArray());
    boolean done = "complete".equals(fields.getString("processingState"));
    int at = fields.getString("step") == null ? 0 : Integer.parseInt(fields.getString("step"));
    java.util.Map<Integer, JsonObject> last = new java.util.HashMap<>();
    attempts(fields).forEach(a -> last.put(((JsonObject) a).getInteger("step"), (JsonObject) a));
    for (int i = 0; i < steps.size(); i++) {
      JsonObject s = steps.getJsonObject(i);
      String state = done ? (i < at || "success".equals(fields.getString("status")) ? "done" : i == at ? "ended"
          : "skipped") : i < at ? "done" : i == at ? "current" : "pending";
      JsonObject step = new JsonObject().put("step", i + 1).put("index", i).put("type", s.getString("type"))
          .put("params", s.getJsonObject("params")).put("state", state);
      JsonObject time = last.get(i + 1);
      if (time != null) {
        step.put("started", time.getString("started")).put("durationMs", time.getLong("durationMs"));
      }
      out.add(step);
    }
    return out;
  }

  /** Its moves to other versions (migrate.lua: {from, to, fromStep, toStep, at, by}), at as ISO-8601 text. */
  private static JsonArray migrations(JsonObject fields) {
    JsonArray out = new JsonArray();
    String stored = fields.getString("migrations");
    if (stored != null) {
      new JsonArray(stored).forEach(m -> {
        JsonObject v = ((JsonObject) m).copy();
        if (v.getValue("at") instanceof Number n) {
          v.put("at", java.time.Instant.ofEpochMilli(n.longValue()).toString());
        }
        out.add(v);
      });
    }
    return out;
  }

  /**
   * Every recorded attempt of a step, in order and across reruns (stepTimes): {step from 1, started, durationMs,
   * node?, outputSize?}. The dashboard's timeline draws them; the failed ones' errors are in summary.errors.
   */
  static JsonArray attempts(JsonObject fields) {
    JsonArray out = new JsonArray();
    String recorded = fields.getString("stepTimes");
    if (recorded == null) {
      return out;
    }
    for (String t : recorded.split(";")) {
      String[] parts = t.split(":");
      if (parts.length < 3) {
        continue;
      }
      JsonObject a = new JsonObject().put("step", Integer.parseInt(parts[0]) + 1)
          .put("started", java.time.Instant.ofEpochMilli(Long.parseLong(parts[1])).toString())
          .put("durationMs", Long.parseLong(parts[2]));
      if (parts.length > 3 && !parts[3].isEmpty()) {
        a.put("node", parts[3]);
      }
      if (parts.length > 4) {
        a.put("outputSize", Long.parseLong(parts[4]));
      }
      out.add(a);
    }
    return out;
  }

  private static Object json(String text) {
    if (text == null || text.isEmpty()) {
      return null;
    }
    try {
      return new JsonObject(text);
    } catch (RuntimeException e) {
      return text;
    }
  }

  /** The owner of any transaction, from Redis or the archive; 404 when neither has it. */
  public Future<String> ownerOf(String txId) {
    if (!Ids.isTxId(txId)) {
      return Future.failedFuture(TxException.invalid("txId", "expected tx- and 32 hex digits"));
    }
    // the owner alone: Redis, else the archive (an archived one then answers already-final to its owner)
    return reads.ownerOf(txId).compose(owner -> owner != null || archive == null
            ? Future.succeededFuture(owner) : archive.find(txId).map(a -> a == null ? null : a.owner()))
        .compose(owner -> owner != null ? Future.succeededFuture(owner)
            : Future.failedFuture(new TxException(Kind.NOT_FOUND, "no transaction " + txId, null, txId)));
  }

  /** Any owner's transaction, from Redis or the archive. */
  public Future<TxSummary> status(String txId) {
    return ownerOf(txId).compose(owner -> tx.status(txId, owner));
  }

  public Future<TxSummary> cancel(String txId) {
    return ownerOf(txId).compose(owner -> tx.cancel(txId, owner));
  }

  /** As cancel, with how many of its tree the cancel walk has still to reach (Transactions.cancelTree). */
  public Future<io.conveyor.domain.Transactions.Cancelled> cancelTree(String txId) {
    return ownerOf(txId).compose(owner -> tx.cancelTree(txId, owner));
  }

  public Future<TxSummary> rerun(String txId, boolean fromStart) {
    return ownerOf(txId).compose(owner -> tx.rerun(txId, owner, fromStart));
  }

  public Future<TxSummary> setSwitch(String txId, String name, Object value) {
    return ownerOf(txId).compose(owner -> tx.setSwitch(txId, owner, name, value));
  }

  /** A sleeping transaction wakes at the reaper leader's next round; one that does not sleep is a conflict. */
  public Future<TxSummary> wake(String txId) {
    return ownerOf(txId).compose(owner -> control.wakeNow(txId).compose(sleeping -> sleeping
        ? tx.status(txId, owner)
        : Future.failedFuture(new TxException(Kind.ALREADY_FINAL, "transaction " + txId + " is not sleeping", null,
            txId))));
  }
}
