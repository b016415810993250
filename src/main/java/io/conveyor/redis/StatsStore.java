package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** The stats series (stats1H/2H/3H, see lua/lib/stats.lua) and the queue lengths behind them. */
public final class StatsStore {
  private final StoreContext r;
  private final Keys keys;

  public StatsStore(StoreContext r) {
    this.r = r;
    this.keys = r.keys();
  }

  /** Samples queue lengths of these groups into the stats (see sample.lua). */
  public Future<Integer> sampleQueues(Collection<String> groups) {
    long now = r.clock().millis();
    List<String> k = new ArrayList<>(List.of(keys.processingZ(), keys.sleepingZ()));
    k.addAll(keys.statsKeys(now));
    List<String> args = new ArrayList<>(List.of(Long.toString(now)));
    for (String g : groups) {
      k.addAll(List.of(keys.qInL(g), keys.qOutL(g), keys.qAdminL(g)));
      args.add(g);
    }
    return r.run(r.scripts().sample, k, args).map(Response::toInteger);
  }

  /** The stats hashes of a series (1, 2 or 3) for these slot starts, in order; an empty object for none. */
  public Future<List<JsonObject>> stats(int series, List<Long> slots) {
    List<Future<Response>> reads = new ArrayList<>(slots.size());
    for (long slot : slots) {
      reads.add(r.send(Request.cmd(Command.HGETALL).arg(keys.statsH(series, slot))));
    }
    return Future.all(reads).map(all -> {
      List<JsonObject> out = new ArrayList<>(slots.size());
      for (int i = 0; i < slots.size(); i++) {
        Response reply = all.resultAt(i);
        JsonObject h = new JsonObject();
        if (reply != null && reply.size() > 0) {
          Replies.hash(reply, (k, v) -> h.put(k, v.toLong()));
        }
        out.add(h);
      }
      return out;
    });
  }

  /** Queue lengths of a group: {in, out, admin}. */
  public Future<JsonObject> queueLengths(String group) {
    return Future.all(r.send(Request.cmd(Command.LLEN).arg(keys.qInL(group))),
            r.send(Request.cmd(Command.LLEN).arg(keys.qOutL(group))),
            r.send(Request.cmd(Command.LLEN).arg(keys.qAdminL(group))))
        .map(f -> new JsonObject().put("in", f.<Response>resultAt(0).toLong())
            .put("out", f.<Response>resultAt(1).toLong()).put("admin", f.<Response>resultAt(2).toLong()));
  }
}
