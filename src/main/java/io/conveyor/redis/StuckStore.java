package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import io.vertx.redis.client.ResponseType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Stuck work (stuck.lua): transactions that look running but are wedged, found by the reaper leader of each
 * partition in bounded batches, listed per partition (stuckZ, stuckH, stuckCountH) until they move on, and read
 * here for the admin view and the conveyor_stuck gauge.
 */
public final class StuckStore extends Store {
  /** Every reason stuck.lua lists, in the order the view and the gauge show them. */
  public static final List<String> REASONS = List.of("running", "sleeping", "retrying", "waiting", "held");
  /** The most HSCAN calls one page of the admin view makes (a filter that matches little ends a page early). */
  static final int MAX_SCANS = 50;

  public StuckStore(StoreContext r) {
    super(r);
  }

  /**
   * grace: how far past its step's timeout a run, or past its wake time a sleeper, or how long after what it waits
   * for ended a parent, may be before it is stuck; heldAfter: how long work may be held back by a limit; batch: the
   * most looked at per place per call.
   */
  public record Settings(Duration grace, Duration heldAfter, int batch) {
  }

  /**
   * A transaction in processingZ longer than grace: when it was dequeued and where it stands (type null when it is
   * not processing any more, or gone: nothing to judge).
   */
  public record Candidate(String txId, long dequeued, String type, String version, int step, long updated,
                          String attempt) {
    /** When its current step began, as far as Redis knows: its dequeue or its last checkpoint. */
    public long stepBegan() {
      return Math.max(dequeued, updated);
    }
  }

  /** A run judged past its step's timeout plus grace (see stuck.lua). */
  public record Running(String txId, String attempt, int step, long stepBegan, long timeoutMs) {
  }

  /** What one call did: the cursors for the next, and how many were listed, repaired and left the list. */
  public record Round(long walk, long look, long found, long repaired, long cleared) {
  }

  /**
   * Up to batch entries of partition p's processingZ dequeued more than grace ago, from offset on (oldest first),
   * with what the caller needs to judge them against their step's timeout. Read-only.
   */
  public Future<List<Candidate>> overdueRuns(int p, long offset, int batch, Duration grace) {
    long until = r.clock().millis() - grace.toMillis();
    Request range = Request.cmd(Command.ZRANGEBYSCORE).arg(keys.processingZ(p)).arg("-inf").arg(until)
        .arg("WITHSCORES").arg("LIMIT").arg(offset).arg(batch);
    return r.send(range).compose(reply -> {
      Map<String, Long> dequeued = new java.util.LinkedHashMap<>();
      pairs(reply, dequeued);
      List<Future<Response>> states = new ArrayList<>();
      dequeued.keySet().forEach(id -> states.add(r.send(Request.cmd(Command.HMGET).arg(keys.stateH(id))
          .arg("type").arg("version").arg("step").arg("updated").arg("attempt").arg("processingState"))));
      return Future.all(states).map(all -> {
        List<Candidate> out = new ArrayList<>();
        int i = 0;
        for (Map.Entry<String, Long> e : dequeued.entrySet()) {
          Response s = states.get(i++).result();
          boolean running = s.get(0) != null && s.get(1) != null && "processing".equals(text(s.get(5)));
          out.add(running ? new Candidate(e.getKey(), e.getValue(), s.get(0).toString(), s.get(1).toString(),
              number(s.get(2)).intValue(), number(s.get(3)), text(s.get(4)))
              : new Candidate(e.getKey(), e.getValue(), null, null, 0, 0, null));
        }
        return out;
      });
    });
  }

  /** One stuck.lua call on partition p: the groups live nodes serve, and the runs the caller judged overdue. */
  public Future<Round> check(int p, Settings s, Collection<String> groups, List<Running> running, long walk,
                             long look) {
    List<String> k = new ArrayList<>(List.of(keys.stuck(p, "Z"), keys.stuck(p, "H"), keys.stuck(p, "CountH"),
        keys.eventsL(p), keys.sleepingZ(p), keys.liveZ(p)));
    List<String> args = new ArrayList<>(List.of(r.now(), Long.toString(s.grace().toMillis()),
        Long.toString(s.heldAfter().toMillis()), Integer.toString(s.batch()), Long.toString(walk),
        Long.toString(look), keys.stateH(p, ""), Integer.toString(groups.size())));
    for (String g : groups) {
      k.add(keys.qHeldS(p, g));
      args.add(keys.qHeldZ(p, g, ""));
    }
    for (Running x : running) {
      args.addAll(List.of(x.txId(), x.attempt(), Integer.toString(x.step()), Long.toString(x.stepBegan()),
          Long.toString(x.timeoutMs())));
    }
    return r.run(r.scripts().stuck, k, args).map(reply -> new Round(reply.get(0).toLong(), reply.get(1).toLong(),
        reply.get(2).toLong(), reply.get(3).toLong(), reply.get(4).toLong()));
  }

  /** How many transactions are listed stuck, by reason, over every partition (every reason, 0 when none). */
  public Future<Map<String, Long>> counts() {
    List<Future<Response>> each = new ArrayList<>();
    for (int p : keys.all()) {
      each.add(r.send(Request.cmd(Command.HGETALL).arg(keys.stuck(p, "CountH"))));
    }
    return Future.all(each).map(all -> {
      Map<String, Long> out = new TreeMap<>();
      REASONS.forEach(reason -> out.put(reason, 0L));
      for (Future<Response> f : each) {
        Response one = f.result();
        one.getKeys().forEach(reason -> out.merge(reason, Math.max(0L, number(one.get(reason))), Long::sum));
      }
      return out;
    });
  }

  /** A page of the stuck list and the cursor of the next one (null at the end). */
  public record Page(List<JsonObject> items, String next) {
  }

  /**
   * Up to limit listed transactions from cursor on ("partition-hscanCursor"; null from the start), partition by
   * partition with HSCAN; reason and owner (each null for any) filter them. A filter that matches little may end
   * a page short of limit after MAX_SCANS calls, with a cursor to go on from.
   */
  public Future<Page> list(String reason, String owner, String cursor, int limit) {
    String[] at = (cursor == null ? "0-0" : cursor).split("-", 2);
    return page(Integer.parseInt(at[0]), at[1], reason, owner, limit, new ArrayList<>(), MAX_SCANS);
  }

  private Future<Page> page(int p, String scan, String reason, String owner, int limit, List<JsonObject> out,
                            int scans) {
    if (p >= keys.partitions() || out.size() >= limit || scans == 0) {
      return Future.succeededFuture(new Page(out, p >= keys.partitions() ? null : p + "-" + scan));
    }
    Request hscan = Request.cmd(Command.HSCAN).arg(keys.stuck(p, "H")).arg(scan).arg("COUNT")
        .arg(Math.max(10, limit - out.size()));
    return r.send(hscan).compose(reply -> {
      Response pairs = reply.get(1);
      for (int i = 0; i + 1 < pairs.size(); i += 2) {
        JsonObject e = new JsonObject(pairs.get(i + 1).toString());
        if ((reason == null || reason.equals(e.getString("reason")))
            && (owner == null || owner.equals(e.getString("owner")))) {
          e.remove("heldKey");
          out.add(e.put("txId", pairs.get(i).toString()).put("partition", p));
        }
      }
      String next = reply.get(0).toString();
      return next.equals("0") ? page(p + 1, "0", reason, owner, limit, out, scans - 1)
          : page(p, next, reason, owner, limit, out, scans - 1);
    });
  }

  /** Member-score pairs of a WITHSCORES reply (RESP2: flat; RESP3: [[member, score], …]) into out. */
  private static void pairs(Response reply, Map<String, Long> out) {
    if (reply == null || reply.size() == 0) {
      return;
    }
    if (reply.get(0).type() == ResponseType.MULTI) {
      reply.forEach(pair -> out.put(pair.get(0).toString(), number(pair.get(1))));
    } else {
      for (int i = 0; i + 1 < reply.size(); i += 2) {
        out.put(reply.get(i).toString(), number(reply.get(i + 1)));
      }
    }
  }

  private static Long number(Response r) {
    return r == null ? 0L : (long) Double.parseDouble(r.toString());
  }

  private static String text(Response r) {
    return r == null ? null : r.toString();
  }
}
