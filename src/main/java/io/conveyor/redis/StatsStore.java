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
public final class StatsStore extends Store {
  public StatsStore(StoreContext r) {
    super(r);
  }

  /** Samples the queue lengths of these groups in a partition into its stats (see sample.lua). */
  public Future<Integer> sampleQueues(int p, Collection<String> groups) {
    long now = r.clock().millis();
    List<String> k = new ArrayList<>(List.of(keys.processingZ(p), keys.sleepingZ(p)));
    k.addAll(keys.statsKeys(p, now));
    k.add(keys.statsFold(p));
    List<String> args = new ArrayList<>(List.of(Long.toString(now), keys.statsPrefix(p, 1), keys.statsPrefix(p, 2),
        keys.statsPrefix(p, 3)));
    for (String g : groups) {
      k.addAll(List.of(keys.qInZ(p, g), keys.qOutL(p, g), keys.qAdminL(p, g)));
      args.add(g);
    }
    return r.run(r.scripts().sample, k, args).map(Response::toInteger);
  }

  /**
   * The stats hashes of a series (1, 2 or 3) for these slot starts, in order, summed over the partitions
   * (counts add up, and so do the queue lengths each partition samples); an empty object for none.
   */
  public Future<List<JsonObject>> stats(int series, List<Long> slots) {
    // per partition, a list with one hash per slot: the 5 s series as stored; the coarser ones with the 5 s
    // slots not folded into them yet (stats-read.lua)
    List<Future<List<Response>>> reads = new ArrayList<>(keys.partitions());
    for (int p : keys.all()) {
      if (series == 1) {
        List<Future<Response>> each = new ArrayList<>(slots.size());
        for (long slot : slots) {
          each.add(r.send(Request.cmd(Command.HGETALL).arg(keys.statsH(p, series, slot))));
        }
        reads.add(Future.all(each).map(f -> f.<Response>list()));
      } else {
        List<String> args = new ArrayList<>(4 + slots.size());
        args.addAll(List.of(keys.statsPrefix(p, series), keys.statsPrefix(p, 1),
            Long.toString(Keys.statsSlotMs(series)), r.now()));
        slots.forEach(slot -> args.add(Long.toString(slot)));
        reads.add(r.run(r.scripts().statsRead, List.of(keys.statsFold(p)), args).map(reply -> {
          List<Response> hashes = new ArrayList<>(reply.size());
          reply.forEach(hashes::add);
          return hashes;
        }));
      }
    }
    return Future.all(reads).map(all -> {
      List<JsonObject> out = new ArrayList<>(slots.size());
      for (int i = 0; i < slots.size(); i++) {
        JsonObject h = new JsonObject();
        for (int p = 0; p < keys.partitions(); p++) {
          Response reply = all.<List<Response>>resultAt(p).get(i);
          if (reply != null && reply.size() > 0) {
            Replies.hash(reply, (k, v) -> h.put(k, h.getLong(k, 0L) + v.toLong()));
          }
        }
        out.add(h);
      }
      return out;
    });
  }

  /** Queue lengths of a group over every partition: {in, out, admin}. */
  public Future<JsonObject> queueLengths(String group) {
    List<Future<Response>> reads = new ArrayList<>();
    for (int p : keys.all()) {
      reads.add(r.send(Request.cmd(Command.ZCARD).arg(keys.qInZ(p, group))));
      reads.add(r.send(Request.cmd(Command.LLEN).arg(keys.qOutL(p, group))));
      reads.add(r.send(Request.cmd(Command.LLEN).arg(keys.qAdminL(p, group))));
    }
    return Future.all(reads).map(f -> {
      long[] sums = new long[3];
      for (int i = 0; i < f.size(); i++) {
        sums[i % 3] += f.<Response>resultAt(i).toLong();
      }
      return new JsonObject().put("in", sums[0]).put("out", sums[1]).put("admin", sums[2]);
    });
  }
}
