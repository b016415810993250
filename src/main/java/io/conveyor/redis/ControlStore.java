package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.json.Json;
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

  /** Reply of cancel.lua: CANCELLED, CANCEL_REQUESTED, ALREADY_FINAL (with the status) or NOT_FOUND. */
  public record CancelReply(Code code, String detail) {
  }

  /** Cancels one of an owner's transactions (see cancel.lua). */
  public Future<CancelReply> cancel(String txId, String owner, Duration archiveDelay) {
    String now = r.now();
    List<String> k = new ArrayList<>(List.of(keys.stateH(txId), keys.toArchiveZ(), keys.notifyChannel(),
        keys.sleepingZ(), keys.webhookH(txId), keys.webhooksZ()));
    k.addAll(keys.statsKeys(Long.parseLong(now)));
    return r.run(r.scripts().cancel, k, List.of(txId, owner, now, Long.toString(archiveDelay.toMillis())))
        .map(reply -> new CancelReply(Code.of(reply), reply.size() > 1 ? reply.get(1).toString() : null));
  }

  /** Sets a switch on an owner's transaction: SET, ALREADY_FINAL or NOT_FOUND (see set-switch.lua). */
  public Future<Code> setSwitch(String txId, String owner, String name, Object value) {
    return r.run(r.scripts().setSwitch, List.of(keys.stateH(txId), keys.sleepingZ()),
        List.of(txId, owner, name, Json.encode(value), r.now(), keys.qInL(""), keys.qRingL(""))).map(Code::of);
  }

  /** Queues up to max sleepers whose time has come; answers how many. */
  public Future<Integer> wake(int max) {
    return r.run(r.scripts().wake, List.of(keys.sleepingZ()), List.of(r.now(), Integer.toString(max),
        keys.stateH(""), keys.qInL(""), keys.qRingL(""))).map(Response::toInteger);
  }

  /** Moves a sleeping transaction's wake time to now (the reaper leader queues it at its next round). */
  public Future<Boolean> wakeNow(String txId) {
    return r.send(Request.cmd(Command.ZADD).arg(keys.sleepingZ()).arg("XX").arg(r.now()).arg(txId))
        .compose(changed -> r.send(Request.cmd(Command.ZSCORE).arg(keys.sleepingZ()).arg(txId)))
        .map(score -> score != null);
  }
}
