package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.util.ArrayList;
import java.util.List;

/**
 * The audit log's side in Redis (admin-event.lua; README, Audit log): each entry is an admin event on partition 0's
 * eventsL and waits on auditX until the archive leader of partition 0 has written it to the archive's audit table.
 */
public final class AdminEvents {
  private AdminEvents() {
  }

  /** auditX: the entries not yet in the archive's audit table (in partition 0; docs/redis-keys.md). */
  public static String auditX(Keys keys) {
    return keys.in(0, "auditX");
  }

  /** One entry on auditX: its stream id and its JSON. */
  public record Waiting(String id, String json) {
  }

  /**
   * Logs the entry (its JSON) as an admin event at its time, naming the node (or command line) that served it and its
   * action, and queues it for the archive, where at most maxWaiting wait (audit.maxWaiting); answers how many of the
   * oldest waiting entries went to make room.
   */
  public static Future<Long> log(StoreContext r, long at, String node, String action, String entryJson,
                                 int maxWaiting) {
    return r.run(r.scripts().adminEvent, List.of(r.keys().eventsL(0), auditX(r.keys())), List.of(Long.toString(at),
        node, action, entryJson, Integer.toString(maxWaiting))).map(Response::toLong);
  }

  /** The oldest entries waiting for the archive, at most max. */
  public static Future<List<Waiting>> waiting(StoreContext r, int max) {
    return r.send(Request.cmd(Command.XRANGE).arg(auditX(r.keys())).arg("-").arg("+").arg("COUNT").arg(max))
        .map(res -> {
          List<Waiting> out = new ArrayList<>();
          if (res != null) {
            for (Response e : res) {
              Response fields = e.get(1);
              for (int i = 0; i + 1 < fields.size(); i += 2) {
                if (fields.get(i).toString().equals("e")) {
                  out.add(new Waiting(e.get(0).toString(), fields.get(i + 1).toString()));
                }
              }
            }
          }
          return out;
        });
  }

  /** Drops entries the archive holds now (by id: entries trimmed meanwhile are simply not there). */
  public static Future<Void> written(StoreContext r, List<Waiting> entries) {
    Request del = Request.cmd(Command.XDEL).arg(auditX(r.keys()));
    entries.forEach(e -> del.arg(e.id()));
    return entries.isEmpty() ? Future.succeededFuture() : r.send(del).mapEmpty();
  }
}
