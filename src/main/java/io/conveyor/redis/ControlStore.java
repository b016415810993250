package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** What clients and operators do to a transaction from outside (cancel, switches, wake) and waking sleepers. */
public final class ControlStore extends Store {
  /** The runs a rerun keeps are the context's limits.maxErrors (the oldest fold into one, lib/errors.lua). */
  public ControlStore(StoreContext r) {
    super(r);
  }

  /** A code and its detail (cancel.lua: ALREADY_FINAL with the status; rerun.lua: OK with the step, …). */
  public record Reply(Code code, String detail) {
  }

  /**
   * Reply of cancel.lua: its code and detail (ALREADY_FINAL: the status) and, once CANCELLED, how many of what
   * it waited for the walk has still to reach above floor (cancelL's length before the call; see walk).
   */
  public record CancelReply(Code code, String detail, long pending, long floor) {
  }

  /** Cancels one of an owner's transactions and up to 20 of its descendants (see cancel.lua). */
  public Future<CancelReply> cancel(String txId, String owner, Duration archiveDelay) {
    String now = r.now();
    int p = keys.partitionOf(txId);
    List<String> k = new ArrayList<>(List.of(keys.stateH(txId), keys.toArchiveZ(p), keys.notifyChannel(p),
        keys.sleepingZ(p), keys.webhookH(txId), keys.webhooksZ(p)));
    k.addAll(keys.statsKeys(p, Long.parseLong(now)));
    k.add(keys.liveZ(p));
    k.add(keys.cancelL(p));
    k.add(keys.liveOwnersH(p));
    k.add(keys.phaseZ(p, "ended"));
    return r.run(r.scripts().cancel, k, List.of(txId, owner, now, Long.toString(archiveDelay.toMillis()),
            keys.stateH(p, ""), keys.qOutL(p, ""), keys.qRingL(p, ""), keys.pipelineInPartitionH(p, ""),
            keys.qInZ(p, ""), keys.webhookH(p, ""), keys.qFairH(p, ""), keys.qOwnerZPrefix(p)))
        .map(reply -> Code.of(reply) == Code.CANCELLED
            ? new CancelReply(Code.CANCELLED, null, reply.get(1).toLong(), reply.get(2).toLong())
            : new CancelReply(Code.of(reply), reply.size() > 1 ? reply.get(1).toString() : null, 0, 0));
  }

  /**
   * Carries partition p's cancel walk on down to floor (0: all of it), one cancel-walk.lua call of at most 20
   * transactions after another, for at most calls calls: answers how many entries above floor are still to go.
   */
  public Future<Long> walk(String txId, long floor, int calls, Duration archiveDelay) {
    return walk(keys.partitionOf(txId), floor, calls, archiveDelay);
  }

  /** The same in partition p. */
  public Future<Long> walk(int p, long floor, int calls, Duration archiveDelay) {
    String now = r.now();
    List<String> k = new ArrayList<>(List.of(keys.cancelL(p), keys.toArchiveZ(p), keys.notifyChannel(p),
        keys.sleepingZ(p)));
    k.addAll(keys.statsKeys(p, Long.parseLong(now)));
    k.add(keys.liveZ(p));
    k.add(keys.liveOwnersH(p));
    k.add(keys.phaseZ(p, "ended"));
    return r.run(r.scripts().cancelWalk, k, List.of(now, Long.toString(archiveDelay.toMillis()),
            Long.toString(floor), keys.stateH(p, ""), keys.qOutL(p, ""), keys.qRingL(p, ""),
            keys.pipelineInPartitionH(p, ""), keys.qInZ(p, ""), keys.webhookH(p, "")))
        .compose(reply -> {
          long pending = reply.get(0).toLong();
          return pending == 0 || calls <= 1 ? Future.succeededFuture(pending) : walk(p, floor, calls - 1, archiveDelay);
        });
  }

  /**
   * Runs an owner's ended transaction again (see rerun.lua): from the step that failed, or from the start.
   * archived (or null) is its archived state, restored first when Redis no longer holds it.
   */
  public Future<Reply> rerun(String txId, String owner, boolean fromStart, JsonObject archived) {
    String now = r.now();
    int p = keys.partitionOf(txId);
    List<String> k = new ArrayList<>(List.of(keys.stateH(txId), keys.toArchiveZ(p)));
    k.addAll(keys.statsKeys(p, Long.parseLong(now)));
    k.add(keys.liveZ(p));
    k.add(keys.liveOwnersH(p));
    return r.run(r.scripts().rerun, k, List.of(txId, owner, now, fromStart ? "start" : "failed", keys.qInZ(p, ""),
            keys.qRingL(p, ""), archived == null ? "" : archived.encode(), Integer.toString(r.limits().maxErrors())))
        .map(reply -> new Reply(Code.of(reply), reply.size() > 1 ? reply.get(1).toString() : null));
  }

  /** Sets a switch on an owner's transaction: SET, ALREADY_FINAL or NOT_FOUND (see set-switch.lua). */
  public Future<Code> setSwitch(String txId, String owner, String name, Object value) {
    int p = keys.partitionOf(txId);
    return r.run(r.scripts().setSwitch, List.of(keys.stateH(txId), keys.sleepingZ(p)),
        List.of(txId, owner, name, Json.encode(value), r.now(), keys.qInZ(p, ""), keys.qRingL(p, "")))
        .map(Code::of);
  }

  /** Queues up to max sleepers of a partition whose time has come; answers how many. */
  public Future<Integer> wake(int p, int max) {
    return r.run(r.scripts().wake, List.of(keys.sleepingZ(p)), List.of(r.now(), Integer.toString(max),
        keys.stateH(p, ""), keys.qInZ(p, ""), keys.qRingL(p, ""))).map(Response::toInteger);
  }

  /**
   * The same for the holder of the partition's reaper lease, taken or renewed in the same call: the number
   * woken, or -1 when the caller does not lead.
   */
  public Future<Integer> wakeLeading(int p, int max, String nodeId, java.time.Duration lease,
                                     java.time.Duration grace) {
    return r.run(r.scripts().wake, List.of(keys.sleepingZ(p), keys.lock1(LeaderRole.REAPER, p),
        keys.lock2(LeaderRole.REAPER, p)), List.of(r.now(), Integer.toString(max), keys.stateH(p, ""),
        keys.qInZ(p, ""), keys.qRingL(p, ""), nodeId, Long.toString(lease.toMillis()),
        Long.toString(grace.toMillis()))).map(Response::toInteger);
  }

  /** Moves a sleeping transaction's wake time to now (the reaper leader queues it at its next round). */
  public Future<Boolean> wakeNow(String txId) {
    String sleeping = keys.sleepingZ(keys.partitionOf(txId));
    // CH answers whether its time moved: then it slept, whether or not the wake leader has already taken it by
    // the next call (a ZSCORE after it once found it gone and answered "not sleeping": CliTest under load). Only an
    // unchanged time (it was due already) needs a look
    return r.send(Request.cmd(Command.ZADD).arg(sleeping).arg("XX").arg("CH").arg(r.now()).arg(txId))
        .compose(changed -> changed.toInteger() > 0 ? Future.succeededFuture(true)
            : r.send(Request.cmd(Command.ZSCORE).arg(sleeping).arg(txId)).map(score -> score != null));
  }

  /** A node group's state summed over the partitions: running, paused or draining; in flight and queued counts. */
  public record GroupState(String group, String state, long since, String by, long inFlight, long queued) {
    /** As the API shows it: since and by while not running, drained while draining. */
    public io.vertx.core.json.JsonObject toJson() {
      io.vertx.core.json.JsonObject out = new io.vertx.core.json.JsonObject().put("group", group).put("state", state)
          .put("inFlight", inFlight).put("queued", queued);
      if (!state.equals("running")) {
        out.put("since", java.time.Instant.ofEpochMilli(since).toString()).put("by", by);
      }
      return state.equals("draining") ? out.put("drained", inFlight == 0) : out;
    }
  }

  /**
   * Who waits in a group, summed over the partitions: per owner with starts under fair share, how many sit
   * in the in-queue (admitted) and how many wait in its own queue; per limit (a pipeline, or '@' and an owner)
   * with work held back, how many are held; per capped limit, how many run. Read-only and not atomic across
   * partitions (a view for operators).
   */
  public Future<io.vertx.core.json.JsonObject> waiting(String group) {
    List<Future<io.vertx.core.json.JsonObject>> per = new ArrayList<>();
    for (int p : keys.all()) {
      per.add(waitingIn(p, group));
    }
    return Future.all(per).map(all -> {
      io.vertx.core.json.JsonObject owners = new io.vertx.core.json.JsonObject();
      io.vertx.core.json.JsonObject held = new io.vertx.core.json.JsonObject();
      io.vertx.core.json.JsonObject running = new io.vertx.core.json.JsonObject();
      for (Future<io.vertx.core.json.JsonObject> f : per) {
        f.result().getJsonObject("owners").forEach(e -> {
          io.vertx.core.json.JsonObject one = (io.vertx.core.json.JsonObject) e.getValue();
          io.vertx.core.json.JsonObject sum = owners.getJsonObject(e.getKey(), new io.vertx.core.json.JsonObject()
              .put("admitted", 0L).put("waiting", 0L));
          owners.put(e.getKey(), sum.put("admitted", sum.getLong("admitted") + one.getLong("admitted"))
              .put("waiting", sum.getLong("waiting") + one.getLong("waiting")));
        });
        f.result().getJsonObject("held").forEach(e -> held.put(e.getKey(),
            held.getLong(e.getKey(), 0L) + (Long) e.getValue()));
        f.result().getJsonObject("running").forEach(e -> running.put(e.getKey(),
            running.getLong(e.getKey(), 0L) + (Long) e.getValue()));
      }
      return new io.vertx.core.json.JsonObject().put("owners", owners).put("held", held).put("running", running);
    });
  }

  private Future<io.vertx.core.json.JsonObject> waitingIn(int p, String group) {
    return Future.all(r.send(Request.cmd(Command.HGETALL).arg(keys.qFairH(p, group))),
        r.send(Request.cmd(Command.SMEMBERS).arg(keys.qHeldS(p, group))),
        r.send(Request.cmd(Command.HGETALL).arg(keys.qRunH(p, group)))).compose(both -> {
          Response fair = both.resultAt(0);
          Response heldNames = both.resultAt(1);
          io.vertx.core.json.JsonObject running = new io.vertx.core.json.JsonObject();
          Response runs = both.resultAt(2);
          for (String field : runs.getKeys()) {
            running.put(field, runs.get(field).toLong());
          }
          java.util.Map<String, Long> admitted = new java.util.TreeMap<>();
          for (String field : fair.getKeys()) {
            if (!field.equals("*")) {
              admitted.put(field, fair.get(field).toLong());
            }
          }
          List<Future<Response>> sizes = new ArrayList<>();
          admitted.keySet().forEach(o -> sizes.add(r.send(Request.cmd(Command.ZCARD).arg(keys.qOwnerZ(p, group, o)))));
          List<String> pipelines = new ArrayList<>();
          heldNames.forEach(n -> pipelines.add(n.toString()));
          pipelines.forEach(n -> sizes.add(r.send(Request.cmd(Command.ZCARD).arg(keys.qHeldZ(p, group, n)))));
          return Future.all(sizes).map(done -> {
            io.vertx.core.json.JsonObject owners = new io.vertx.core.json.JsonObject();
            int i = 0;
            for (java.util.Map.Entry<String, Long> e : admitted.entrySet()) {
              owners.put(e.getKey(), new io.vertx.core.json.JsonObject().put("admitted", e.getValue())
                  .put("waiting", sizes.get(i++).result().toLong()));
            }
            io.vertx.core.json.JsonObject held = new io.vertx.core.json.JsonObject();
            for (String n : pipelines) {
              held.put(n, sizes.get(i++).result().toLong());
            }
            return new io.vertx.core.json.JsonObject().put("owners", owners).put("held", held)
                .put("running", running);
          });
        });
  }

  /**
   * Pauses, drains or resumes a node group in every partition (action pause, drain, resume), or reads its state
   * (read); see group-state.lua. Answers the state after the action.
   */
  public Future<GroupState> groupState(String group, String action, String by) {
    List<Future<Response>> each = new java.util.ArrayList<>();
    String now = r.now();
    for (int p : keys.all()) {
      each.add(r.run(r.scripts().groupState, List.of(keys.groupH(p, group), keys.qRingL(p, group),
          keys.processingZ(p), keys.qAdminL(p, group), keys.qOutL(p, group), keys.qInZ(p, group),
          keys.qFairH(p, group)),
          List.of(action, now, by == null ? "" : by, keys.stateH(p, ""), group)));
    }
    return Future.all(each).map(all -> {
      String state = "running";
      long since = 0;
      String who = "";
      long inFlight = 0;
      long queued = 0;
      for (Future<Response> f : each) {
        Response one = f.result();
        if (!"running".equals(one.get(0).toString())) {
          state = one.get(0).toString();
          since = Math.max(since, one.get(1).toString().isEmpty() ? 0 : Long.parseLong(one.get(1).toString()));
          who = one.get(2).toString();
        }
        inFlight += one.get(3).toLong();
        queued += one.get(4).toLong();
      }
      return new GroupState(group, state, since, who, inFlight, queued);
    });
  }
}
