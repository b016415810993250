package io.conveyor.redis;

import io.conveyor.model.TxSummary;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import io.vertx.redis.client.ResponseType;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Reads of transactions for clients and operators, and the health reads behind readiness. */
public final class ReadStore {
  private final StoreContext r;
  private final Keys keys;

  public ReadStore(StoreContext r) {
    this.r = r;
    this.keys = r.keys();
  }

  /** The summary of a transaction, or null when Redis has none. */
  public Future<TxSummary> getState(String txId) {
    return r.run(r.scripts().getState, List.of(keys.stateH(txId), keys.webhookH(txId)), List.of())
        .map(reply -> reply.size() == 0 ? null : Summaries.fromGetState(txId, reply));
  }

  /** The txId an owner's externalId names (while its uniqueness period lasts), or null. */
  public Future<String> txIdForExternalId(String owner, String externalId) {
    return r.send(Request.cmd(Command.GET).arg(keys.externalId(owner, externalId))).map(Replies::str);
  }

  /** The owner of a transaction Redis holds, or null. */
  public Future<String> ownerOf(String txId) {
    return r.send(Request.cmd(Command.HGET).arg(keys.stateH(txId)).arg("owner")).map(Replies::str);
  }

  /** Every field of a transaction's state as Redis holds it, or null. */
  public Future<JsonObject> rawState(String txId) {
    return r.send(Request.cmd(Command.HGETALL).arg(keys.stateH(txId))).map(reply -> {
      if (reply == null || reply.size() == 0) {
        return null;
      }
      JsonObject fields = new JsonObject();
      Replies.hash(reply, (k, v) -> fields.put(k, v.toString()));
      return fields;
    });
  }

  /** Operational events (eventsL) that name this transaction, newest first, up to 50 looked at 1000. */
  public Future<JsonArray> eventsAbout(String txId) {
    return r.send(Request.cmd(Command.LRANGE).arg(keys.eventsL()).arg(0).arg(999)).map(reply -> {
      JsonArray out = new JsonArray();
      for (Response e : reply) {
        String text = e.toString();
        if (text.contains(txId) && out.size() < 50) {
          try {
            out.add(new JsonObject(text));
          } catch (RuntimeException notJson) {
            out.add(new JsonObject().put("text", text));
          }
        }
      }
      return out;
    });
  }

  /** Lists an operator can look at: which sorted set holds them, newest first or oldest first. */
  public enum AdminList { INPLAY, SLEEPING, EXCEPTIONS, RECENT }

  /** Up to limit transactions of a list: {txId, at (the set's score), owner, type, status, processingState}. */
  public Future<JsonArray> adminList(AdminList list, int limit) {
    String key = switch (list) {
      case INPLAY -> keys.processingZ();
      case SLEEPING -> keys.sleepingZ();
      case EXCEPTIONS -> keys.exceptionZ();
      case RECENT -> keys.toArchiveZ();
    };
    Request range = Request.cmd(Command.ZRANGE).arg(key).arg(0).arg(limit - 1);
    if (list == AdminList.EXCEPTIONS || list == AdminList.RECENT) {
      range.arg("REV");
    }
    range.arg("WITHSCORES");
    return r.send(range).compose(reply -> {
      List<String> ids = new ArrayList<>();
      List<Long> scores = new ArrayList<>();
      scored(reply, ids, scores);
      List<Future<Response>> reads = new ArrayList<>();
      for (String id : ids) {
        reads.add(r.send(Request.cmd(Command.HMGET).arg(keys.stateH(id)).arg("owner").arg("type").arg("status")
            .arg("processingState")));
      }
      return Future.all(reads).map(all -> {
        JsonArray out = new JsonArray();
        for (int i = 0; i < ids.size(); i++) {
          Response h = all.resultAt(i);
          out.add(new JsonObject().put("txId", ids.get(i)).put("at", Instant.ofEpochMilli(scores.get(i)).toString())
              .put("owner", Replies.str(h.get(0))).put("type", Replies.str(h.get(1)))
              .put("status", Replies.str(h.get(2))).put("processingState", Replies.str(h.get(3))));
        }
        return out;
      });
    });
  }

  /** Members and scores of a WITHSCORES reply, as RESP3 gives it (pairs) or RESP2 (a flat list). */
  private static void scored(Response reply, List<String> ids, List<Long> scores) {
    for (int i = 0; i < reply.size(); i++) {
      Response e = reply.get(i);
      if (e.type() == ResponseType.MULTI) {
        ids.add(e.get(0).toString());
        scores.add((long) Double.parseDouble(e.get(1).toString()));
      } else if (i + 1 < reply.size()) {
        ids.add(e.toString());
        scores.add((long) Double.parseDouble(reply.get(++i).toString()));
      }
    }
  }

  /** Answers when Redis does: readiness. */
  public Future<Void> ping() {
    return r.send(Request.cmd(Command.PING)).mapEmpty();
  }

  /** How many of the node's scripts Redis has loaded. */
  public Future<Integer> scriptsLoaded() {
    Request exists = Request.cmd(Command.SCRIPT).arg("EXISTS");
    r.scripts().all().forEach(s -> exists.arg(s.sha()));
    return r.send(exists).map(reply -> {
      int n = 0;
      for (Response x : reply) {
        n += x.toInteger();
      }
      return n;
    });
  }
}
