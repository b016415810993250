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
public final class ControlStore {
  private final StoreContext r;
  private final Keys keys;

  public ControlStore(StoreContext r) {
    this.r = r;
    this.keys = r.keys();
  }

  /** A code and its detail (cancel.lua: ALREADY_FINAL with the status; rerun.lua: OK with the step, …). */
  public record Reply(Code code, String detail) {
  }

  /** Cancels one of an owner's transactions (see cancel.lua). */
  public Future<Reply> cancel(String txId, String owner, Duration archiveDelay) {
    String now = r.now();
    int p = keys.partitionOf(txId);
    List<String> k = new ArrayList<>(List.of(keys.stateH(txId), keys.toArchiveZ(p), keys.notifyChannel(p),
        keys.sleepingZ(p), keys.webhookH(txId), keys.webhooksZ(p)));
    k.addAll(keys.statsKeys(p, Long.parseLong(now)));
    return r.run(r.scripts().cancel, k, List.of(txId, owner, now, Long.toString(archiveDelay.toMillis()),
            keys.stateH(p, ""), keys.qOutL(p, ""), keys.qRingL(p, ""), keys.pipelineInPartitionH(p, ""),
            keys.qInZ(p, ""), keys.webhookH(p, ""), keys.qFairH(p, ""), keys.qOwnerZPrefix(p)))
        .map(reply -> new Reply(Code.of(reply), reply.size() > 1 ? reply.get(1).toString() : null));
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
    return r.run(r.scripts().rerun, k, List.of(txId, owner, now, fromStart ? "start" : "failed", keys.qInZ(p, ""),
            keys.qRingL(p, ""), archived == null ? "" : archived.encode()))
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
    return r.send(Request.cmd(Command.ZADD).arg(sleeping).arg("XX").arg(r.now()).arg(txId))
        .compose(changed -> r.send(Request.cmd(Command.ZSCORE).arg(sleeping).arg(txId)))
        .map(score -> score != null);
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
