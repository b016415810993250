package io.conveyor.redis;

import static io.conveyor.redis.Replies.str;

import io.conveyor.model.Schedule;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Schedules in Redis, in the shape of the jobs seed: each schedule's hash (definition and runs), schedulesZ by
 * next fire, and a purgatory for fires in hand (see schedule-put, schedule-due, schedule-fire, schedule-done).
 */
public final class ScheduleStore extends Store {
  public ScheduleStore(StoreContext r) {
    super(r);
  }

  /** A fire's next time and its score in schedulesZ (the time plus the fire's jitter), or none (-1). */
  public record Next(long fire, long score) {
    public static final Next NONE = new Next(-1, -1);

    /** A schedule's next fire after now, with its jitter, or none. */
    public static Next after(Schedule s, long now) {
      long f = s.nextAfter(now);
      return f < 0 ? NONE : new Next(f, f + s.jitterOf(f));
    }
  }

  /** Publishes a definition made at publishedAt (ms): OK, or KEPT when a newer publication is current. */
  public Future<Code> put(String id, JsonObject definition, long publishedAt, boolean paused, Next next) {
    return put(id, List.of("put", id, r.now(), definition.encode(), Long.toString(publishedAt), paused ? "1" : "0",
        next.fire() < 0 ? "" : Long.toString(next.fire()), next.fire() < 0 ? "" : Long.toString(next.score())));
  }

  /** Pauses (by whom, why) or resumes (at next) a schedule: OK or NOT_FOUND. */
  public Future<Code> setPaused(String id, boolean paused, String by, String why, Next next) {
    return put(id, List.of("state", id, r.now(), paused ? "1" : "0", by == null ? "" : by, why == null ? "" : why,
        next.fire() < 0 ? "" : Long.toString(next.fire()), next.fire() < 0 ? "" : Long.toString(next.score())));
  }

  /** Deletes a schedule: OK or NOT_FOUND. */
  public Future<Code> delete(String id) {
    return put(id, List.of("delete", id, r.now()));
  }

  private Future<Code> put(String id, List<String> args) {
    int p = keys.partitionOfSchedule(id);
    return r.run(r.scripts().schedulePut, List.of(keys.scheduleH(id), keys.schedulesS(p), keys.schedulesZ(p)), args)
        .map(Code::of);
  }

  /** The partition a schedule lives in. */
  public int partitionOf(String id) {
    return keys.partitionOfSchedule(id);
  }

  /** A schedule's hash (definition, publishedAt, paused, nextFire, lastTxId, fires, …), or null. */
  public Future<JsonObject> get(String id) {
    return r.send(Request.cmd(Command.HGETALL).arg(keys.scheduleH(id))).map(reply -> {
      if (reply == null || reply.size() == 0) {
        return null;
      }
      JsonObject out = new JsonObject();
      for (String k : reply.getKeys()) {
        out.put(k, str(reply.get(k)));
      }
      return out;
    });
  }

  /** Every schedule id, over the partitions, sorted. */
  public Future<List<String>> ids() {
    List<Future<Response>> each = new ArrayList<>();
    for (int p : keys.all()) {
      each.add(r.send(Request.cmd(Command.SMEMBERS).arg(keys.schedulesS(p))));
    }
    return Future.all(each).map(all -> {
      List<String> out = new ArrayList<>();
      each.forEach(f -> f.result().forEach(id -> out.add(id.toString())));
      java.util.Collections.sort(out);
      return out;
    });
  }

  /**
   * The txId a start with this owner and externalId made, while its uniqueness period lasts (Redis alone: no
   * archive lookup), or null.
   */
  public Future<String> startedBy(String owner, String externalId) {
    return r.send(Request.cmd(Command.GET).arg(keys.externalId(owner, externalId))).map(id -> id == null ? null
        : id.toString());
  }

  /** A due schedule: its id, the planned fire it is due at, its definition, last run and queued fire (or null). */
  public record Due(String id, long fire, String definition, String lastTxId, Long queuedFire) {
  }

  /** A fire to drive again: its member "<id>@<fire>", its schedule's definition (null: gone) and last run. */
  public record Redrive(String member, String id, long fire, String definition, String lastTxId) {
  }

  /** One round: null when the caller does not lead the partition's scheduler, else what is due and what to redrive. */
  public record Round(List<Due> due, List<Redrive> redrive) {
  }

  public Future<Round> due(int p, String nodeId, Duration lease, Duration grace, int max, Duration redriveAfter,
                           boolean mayTake) {
    return r.run(r.scripts().scheduleDue, List.of(keys.schedulesZ(p), keys.schedulePurgatoryZ(p),
            keys.lock1(LeaderRole.SCHEDULER, p), keys.lock2(LeaderRole.SCHEDULER, p)),
        List.of(nodeId, r.now(), Long.toString(lease.toMillis()), Long.toString(grace.toMillis()), Integer.toString(max),
            keys.scheduleH(p, ""), Long.toString(redriveAfter.toMillis()), mayTake ? "1" : "0")).map(reply -> {
              if (reply.get(0).toInteger() == 0) {
                return null;
              }
              List<Due> due = new ArrayList<>();
              for (Response d : reply.get(1)) {
                String queued = str(d.get(4));
                due.add(new Due(str(d.get(0)), Long.parseLong(str(d.get(1))), str(d.get(2)), emptyToNull(str(d.get(3))),
                    queued == null || queued.isEmpty() ? null : Long.parseLong(queued)));
              }
              List<Redrive> redrive = new ArrayList<>();
              for (Response d : reply.get(2)) {
                String member = str(d.get(0));
                int at = member.lastIndexOf('@');
                redrive.add(new Redrive(member, member.substring(0, at), Long.parseLong(member.substring(at + 1)),
                    emptyToNull(str(d.get(1))), emptyToNull(str(d.get(2)))));
              }
              return new Round(due, redrive);
            });
  }

  /** A due schedule moved on: the planned fire it was due at, its next, misses, and the fires to run now. */
  public record Move(String id, long planned, Next next, long misses, List<Long> fires) {
  }

  /** Moves due fires into the purgatory (see schedule-fire.lua): null when the caller no longer leads, else moved or not per move. */
  public Future<List<Boolean>> fire(int p, String nodeId, List<Move> moves) {
    List<String> k = new ArrayList<>(List.of(keys.schedulesZ(p), keys.schedulePurgatoryZ(p),
        keys.lock1(LeaderRole.SCHEDULER, p)));
    List<String> args = new ArrayList<>(List.of(nodeId, r.now()));
    for (Move m : moves) {
      k.add(keys.scheduleH(m.id()));
      args.addAll(List.of(m.id(), Long.toString(m.planned()), m.next().fire() < 0 ? "" : Long.toString(m.next().fire()),
          m.next().fire() < 0 ? "" : Long.toString(m.next().score()), Long.toString(m.misses()),
          String.join(",", m.fires().stream().map(String::valueOf).toList())));
    }
    return r.run(r.scripts().scheduleFire, k, args).map(reply -> {
      if (reply.get(0).toInteger() == 0) {
        return null;
      }
      List<Boolean> out = new ArrayList<>();
      for (int i = 1; i < reply.size(); i++) {
        out.add(reply.get(i).toInteger() == 1);
      }
      return out;
    });
  }

  /** What became of a fire: started, skipped, queued, dropped or paused (see schedule-done.lua). */
  public record Done(String id, long fire, String outcome, String txId, String note) {
  }

  /** Records what became of fires; answers how many left the purgatory. */
  public Future<Integer> done(int p, List<Done> fires) {
    List<String> k = new ArrayList<>(List.of(keys.schedulePurgatoryZ(p), keys.schedulesZ(p), keys.eventsL(p)));
    List<String> args = new ArrayList<>(List.of(r.now()));
    for (Done d : fires) {
      k.add(keys.scheduleH(d.id()));
      args.addAll(List.of(d.id() + "@" + d.fire(), Long.toString(d.fire()), d.outcome(),
          d.txId() == null ? "" : d.txId(), d.note() == null ? "" : d.note()));
    }
    return r.run(r.scripts().scheduleDone, k, args).map(Response::toInteger);
  }

  private static String emptyToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }
}
