package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Operational events (eventsL, one list per partition, newest first): read in one shape, {time, kind, node,
 * subject, details}, whatever version wrote them, and kept within bounds: MAX_LENGTH per partition (the scripts
 * trim as they write) and MAX_AGE (the reaper leader of each partition drops older ones, see trim).
 */
public final class EventStore extends Store {
  public static final int MAX_LENGTH = 1000;
  public static final Duration MAX_AGE = Duration.ofDays(7);
  /** The most entries exceptionZ keeps per partition (the newest). */
  public static final int MAX_EXCEPTIONS = 10_000;

  public EventStore(StoreContext r) {
    super(r);
  }

  /** An event in the one shape; an entry of the earlier shape ({type, time, details}) is mapped to it. */
  public static JsonObject normalize(String text) {
    JsonObject e;
    try {
      e = new JsonObject(text);
    } catch (RuntimeException notJson) {
      return new JsonObject().put("time", 0L).put("kind", "unreadable").put("node", "").put("subject", "")
          .put("details", new JsonObject().put("text", text));
    }
    if (e.containsKey("kind")) {
      return e;
    }
    JsonObject d = e.getJsonObject("details", new JsonObject());
    String subject = d.getString("txId", d.getString("nodeId", d.getString("scheduleId", d.getString("url", ""))));
    return new JsonObject().put("time", e.getLong("time", 0L)).put("kind", e.getString("type", "unknown"))
        .put("node", d.getString("nodeId", "")).put("subject", subject).put("details", d);
  }

  /** A filter on events: each null when not given; time in [since, until). */
  public record Filter(String kind, String node, String subject, Long since, Long until, int limit) {
    boolean matches(JsonObject e) {
      long t = e.getLong("time", 0L);
      return (kind == null || kind.equals(e.getString("kind"))) && (node == null || node.equals(e.getString("node")))
          && (subject == null || subject.equals(e.getString("subject"))) && (since == null || t >= since)
          && (until == null || t < until);
    }
  }

  /** Every partition's events that match, newest first, at most f.limit(). */
  public Future<JsonArray> read(Filter f) {
    List<Future<Response>> each = new ArrayList<>();
    for (int p : keys.all()) {
      each.add(r.send(Request.cmd(Command.LRANGE).arg(keys.eventsL(p)).arg(0).arg(MAX_LENGTH - 1)));
    }
    return Future.all(each).map(all -> {
      List<JsonObject> events = new ArrayList<>();
      for (Future<Response> one : each) {
        for (Response e : one.result()) {
          JsonObject n = normalize(e.toString());
          if (f.matches(n)) {
            events.add(n);
          }
        }
      }
      events.sort(Comparator.comparingLong((JsonObject e) -> e.getLong("time", 0L)).reversed());
      JsonArray out = new JsonArray();
      events.stream().limit(f.limit()).forEach(out::add);
      return out;
    });
  }

  /**
   * Drops partition p's events older than MAX_AGE (at most 1000 a call) and all but the newest MAX_EXCEPTIONS
   * entries of its exceptionZ (see trim.lua); answers how many events went.
   */
  public Future<Integer> trim(int p) {
    return r.run(r.scripts().eventsTrim, List.of(keys.eventsL(p), keys.exceptionZ(p)),
        List.of(Long.toString(r.clock().millis() - MAX_AGE.toMillis()), Integer.toString(MAX_EXCEPTIONS)))
        .map(reply -> reply.get(0).toInteger());
  }
}
