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
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/** Reads of transactions for clients and operators, and the health reads behind readiness. */
public final class ReadStore extends Store {
  public ReadStore(StoreContext r) {
    super(r);
  }

  /**
   * The txIds of a pipeline's transactions Redis still holds that ended with this status, completed in [from,
   * to) (ms): those waiting in toArchiveZ (scored completion + archiveDelay), at most limit from each partition.
   * One being archived right now, or waiting for its compensation, is not among them.
   */
  public Future<List<String>> ended(String type, String status, long from, long to, long archiveDelay, int limit) {
    List<Future<List<String>>> each = new ArrayList<>();
    for (int p : keys.all()) {
      each.add(r.send(Request.cmd(Command.ZRANGEBYSCORE).arg(keys.toArchiveZ(p)).arg(from + archiveDelay)
              .arg("(" + (to + archiveDelay)).arg("LIMIT").arg(0).arg(limit))
          .compose(ids -> {
            List<Future<String>> checked = new ArrayList<>();
            ids.forEach(id -> checked.add(r.send(Request.cmd(Command.HMGET).arg(keys.stateH(id.toString()))
                    .arg("type").arg("status").arg("processingState"))
                .map(f -> type.equals(Replies.str(f.get(0))) && status.equals(Replies.str(f.get(1)))
                    && "complete".equals(Replies.str(f.get(2))) ? id.toString() : null)));
            return Future.all(checked).map(all -> all.<String>list().stream().filter(java.util.Objects::nonNull)
                .toList());
          }));
    }
    return Future.all(each).map(all -> all.<List<String>>list().stream().flatMap(List::stream).toList());
  }

  /**
   * How many transactions of a pipeline (of a group) Redis holds that have not ended: among each partition's
   * processing, sleeping and queued ones of the group, up to limit of each; -1 when a set held more than
   * that, so the count is not known.
   */
  public Future<Integer> liveOf(String type, String group, int limit) {
    List<Future<Response>> sets = new ArrayList<>();
    for (int p : keys.all()) {
      sets.add(r.send(Request.cmd(Command.ZRANGE).arg(keys.processingZ(p)).arg(0).arg(limit)));
      sets.add(r.send(Request.cmd(Command.ZRANGE).arg(keys.sleepingZ(p)).arg(0).arg(limit)));
      for (String q : List.of(keys.qAdminL(p, group), keys.qOutL(p, group))) {
        sets.add(r.send(Request.cmd(Command.LRANGE).arg(q).arg(0).arg(limit)));
      }
      sets.add(r.send(Request.cmd(Command.ZRANGE).arg(keys.qInZ(p, group)).arg(0).arg(limit)));
    }
    return Future.all(sets).compose(all -> {
      java.util.Set<String> ids = new java.util.HashSet<>();
      for (int i = 0; i < sets.size(); i++) {
        Response members = all.resultAt(i);
        if (members.size() > limit) {
          return Future.succeededFuture(-1);
        }
        members.forEach(m -> ids.add(m.toString()));
      }
      List<Future<Boolean>> ofType = new ArrayList<>();
      for (String id : ids) {
        ofType.add(r.send(Request.cmd(Command.HMGET).arg(keys.stateH(id)).arg("type").arg("processingState"))
            .map(f -> type.equals(Replies.str(f.get(0))) && !"complete".equals(Replies.str(f.get(1)))));
      }
      return Future.all(ofType).map(checked -> (int) checked.<Boolean>list().stream().filter(b -> b).count());
    });
  }

  /** The summary of a transaction, or null when Redis has none. */
  /** What search.lua found in a partition: matches (txId, created, phase), and where the walk stopped (or null). */
  public record LiveFound(List<LiveMatch> matches, Long nextCreated, String nextTx) {
  }

  public record LiveMatch(String txId, long created, String phase) {
  }

  /**
   * Walks partition p's transactions newest first from below (beforeCreated, beforeTx) (or from to, exclusive,
   * or the newest), down to from (inclusive), and answers at most want that match, having looked at no more
   * than budget (see search.lua). Filters are null when not given; phases is a set of phases or empty (any);
   * text is matched in the metadata JSON, case-insensitive. The walk is of liveZ, or with index a phase index
   * (Keys.phaseZ(p, index)) that holds the phases held.
   */
  public Future<LiveFound> search(int p, String index, java.util.Collection<String> held, String owner, String type,
                                  java.util.Collection<String> phases, String externalId, String text, Long from,
                                  Long to, Long beforeCreated, String beforeTx, int want, int budget) {
    String max;
    String skip = "";
    if (beforeCreated != null) {
      max = Long.toString(beforeCreated);
      skip = beforeTx;
      if (to != null && to <= beforeCreated) {
        max = "(" + to;
        skip = "";
      }
    } else {
      max = to == null ? "+inf" : "(" + to;
    }
    String walked = index == null ? keys.liveZ(p) : keys.phaseZ(p, index);
    return r.run(r.scripts().search, List.of(walked, keys.stuck(p, "H")), List.of(keys.stateH(p, ""), max, skip,
        from == null ? "-inf" : Long.toString(from), Integer.toString(want), Integer.toString(budget),
        owner == null ? "" : owner, type == null ? "" : type,
        phases.isEmpty() ? "" : "," + String.join(",", phases) + ",", externalId == null ? "" : externalId,
        text == null ? "" : text.toLowerCase(java.util.Locale.ROOT),
        index == null ? "" : "," + String.join(",", held) + ",")).map(reply -> {
          List<LiveMatch> out = new java.util.ArrayList<>();
          Response m = reply.get(0);
          for (int i = 0; i + 2 < m.size(); i += 3) {
            out.add(new LiveMatch(m.get(i).toString(), Long.parseLong(m.get(i + 1).toString()), m.get(i + 2).toString()));
          }
          String next = reply.get(1).toString();
          if (next.isEmpty()) {
            return new LiveFound(out, null, null);
          }
          int space = next.indexOf(' ');
          return new LiveFound(out, Long.parseLong(next.substring(0, space)), next.substring(space + 1));
        });
  }

  public Future<TxSummary> getState(String txId) {
    return r.run(r.scripts().getState, List.of(keys.stateH(txId), keys.webhookH(txId)), List.of())
        .map(reply -> reply.size() == 0 ? null : Summaries.fromGetState(txId, reply))
        .compose(s -> Seals.opened(payloads(), s));
  }

  /** A summary read elsewhere (the archive keeps sealed payloads as they are) with its payloads opened. */
  public Future<TxSummary> opened(TxSummary s) {
    return Seals.opened(payloads(), s);
  }

  /** Fields of a state read elsewhere (an archived one) with input, data, metadata and output opened. */
  public Future<JsonObject> openedFields(String txId, JsonObject fields) {
    return Seals.openedFields(payloads(), txId, fields);
  }

  /** The txId an owner's externalId names (while its uniqueness period lasts), or null. */
  public Future<String> txIdForExternalId(String owner, String externalId) {
    return r.send(Request.cmd(Command.GET).arg(keys.externalId(owner, externalId))).map(Replies::str);
  }

  /** The owner of a transaction Redis holds, or null. */
  public Future<String> ownerOf(String txId) {
    return r.send(Request.cmd(Command.HGET).arg(keys.stateH(txId)).arg("owner")).map(Replies::str);
  }

  /** When a sleeping transaction wakes at the latest (its sleepingZ score, ms), or null when it does not sleep. */
  public Future<Long> wakeAt(String txId) {
    return r.send(Request.cmd(Command.ZSCORE).arg(keys.sleepingZ(keys.partitionOf(txId))).arg(txId))
        .map(reply -> reply == null ? null : (long) Double.parseDouble(reply.toString()));
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
    }).compose(fields -> Seals.openedFields(payloads(), txId, fields));
  }

  /**
   * Operational events (eventsL of the transaction's partition) that name this transaction, newest first, up
   * to 50 looked at 1000.
   */
  public Future<JsonArray> eventsAbout(String txId) {
    return r.send(Request.cmd(Command.LRANGE).arg(keys.eventsL(keys.partitionOf(txId))).arg(0).arg(999)).map(reply -> {
      JsonArray out = new JsonArray();
      for (Response e : reply) {
        String text = e.toString();
        if (text.contains(txId) && out.size() < 50) {
          out.add(EventStore.normalize(text));
        }
      }
      return out;
    });
  }

  /** Lists an operator can look at: which sorted set holds them, newest first or oldest first. */
  public enum AdminList { INPLAY, SLEEPING, EXCEPTIONS, RECENT }

  /**
   * Up to limit transactions of a list over every partition: {txId, at (the set's score), owner, type,
   * status, processingState}, newest first for exceptions and recent ones, else oldest first.
   */
  public Future<JsonArray> adminList(AdminList list, int limit) {
    boolean newestFirst = list == AdminList.EXCEPTIONS || list == AdminList.RECENT;
    List<Future<Response>> ranges = new ArrayList<>();
    for (int p : keys.all()) {
      String key = switch (list) {
        case INPLAY -> keys.processingZ(p);
        case SLEEPING -> keys.sleepingZ(p);
        case EXCEPTIONS -> keys.exceptionZ(p);
        case RECENT -> keys.toArchiveZ(p);
      };
      Request range = Request.cmd(Command.ZRANGE).arg(key).arg(0).arg(limit - 1);
      if (newestFirst) {
        range.arg("REV");
      }
      ranges.add(r.send(range.arg("WITHSCORES")));
    }
    return Future.all(ranges).compose(replies -> {
      List<Map.Entry<String, Long>> merged = new ArrayList<>();
      for (int i = 0; i < replies.size(); i++) {
        List<String> someIds = new ArrayList<>();
        List<Long> someScores = new ArrayList<>();
        scored(replies.resultAt(i), someIds, someScores);
        for (int j = 0; j < someIds.size(); j++) {
          merged.add(Map.entry(someIds.get(j), someScores.get(j)));
        }
      }
      Comparator<Map.Entry<String, Long>> byScore = Map.Entry.comparingByValue();
      merged.sort(newestFirst ? byScore.reversed() : byScore);
      List<String> ids = new ArrayList<>();
      List<Long> scores = new ArrayList<>();
      merged.stream().limit(limit).forEach(e -> {
        ids.add(e.getKey());
        scores.add(e.getValue());
      });
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
    r.scripts().all().forEach(s -> exists.arg(r.scripts().sent(s).sha()));
    return r.send(exists).map(reply -> {
      int n = 0;
      for (Response x : reply) {
        n += x.toInteger();
      }
      return n;
    });
  }
}
