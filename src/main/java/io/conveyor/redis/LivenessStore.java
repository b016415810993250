package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Which nodes live (heartbeats, registration), taking over dead ones, and the leases of leader-only roles. */
public final class LivenessStore {
  private final StoreContext r;
  private final Keys keys;

  public LivenessStore(StoreContext r) {
    this.r = r;
    this.keys = r.keys();
  }

  /** Registers this node (at start, or again after it was taken over) and writes its heartbeat. */
  public Future<Void> register(String nodeId, JsonObject info, Duration ttl) {
    return beat(nodeId, info, ttl, "register").mapEmpty();
  }

  /**
   * Writes the heartbeat of a node that believes it is registered: OK, LATE (it had expired, but nobody took
   * the node over) or FENCED (the node was taken over; nothing written). See heartbeat.lua.
   */
  public Future<Code> heartbeat(String nodeId, JsonObject info, Duration ttl) {
    return beat(nodeId, info, ttl, "beat");
  }

  private Future<Code> beat(String nodeId, JsonObject info, Duration ttl, String mode) {
    return r.run(r.scripts().heartbeat, List.of(keys.heartbeat(nodeId), keys.nodesZ()),
        List.of(nodeId, info.encode(), Long.toString(ttl.toMillis()), r.now(), mode)).map(Code::of);
  }

  /** How long a node's heartbeat key lives on (by Redis's clock), or null when it is gone. */
  public Future<Duration> heartbeatLeft(String nodeId) {
    return r.send(Request.cmd(Command.PTTL).arg(keys.heartbeat(nodeId)))
        .map(ms -> ms.toLong() < 0 ? null : Duration.ofMillis(ms.toLong()));
  }

  /** Removes this node's heartbeat and registration: it leaves on purpose, with nothing in flight. */
  public Future<Void> leave(String nodeId) {
    return r.send(Request.cmd(Command.DEL).arg(keys.heartbeat(nodeId)))
        .compose(x -> r.send(Request.cmd(Command.ZREM).arg(keys.nodesZ()).arg(nodeId))).mapEmpty();
  }

  /** What one reap.lua call did: transactions put back per node taken over, and processingZ entries cleared. */
  public record Reaped(Map<String, Integer> recovered, int garbage) {
  }

  /**
   * Takes over the nodes whose heartbeat expired (unless judge is false: a grace period after a Redis
   * outage) and clears processingZ entries older than staleAfter that have no live owner (see reap.lua).
   */
  public Future<Reaped> reap(boolean judge, Duration staleAfter) {
    List<String> args = List.of(r.now(), Long.toString(staleAfter.toMillis()), keys.stateH(""),
        keys.inflightZ(""), keys.heartbeatPrefix(), Keys.HEARTBEAT_SUFFIX, keys.qInL(""), keys.qRingL(""),
        judge ? "1" : "0");
    return r.run(r.scripts().reap, List.of(keys.nodesZ(), keys.processingZ(), keys.eventsL(), keys.exceptionZ()),
        args).map(reply -> {
          Map<String, Integer> nodes = new LinkedHashMap<>();
          int garbage = 0;
          for (int i = 0; i + 1 < reply.size(); i += 2) {
            String name = reply.get(i).toString();
            if (name.equals("garbage")) {
              garbage = reply.get(i + 1).toInteger();
            } else {
              nodes.put(name, reply.get(i + 1).toInteger());
            }
          }
          return new Reaped(nodes, garbage);
        });
  }

  /** The heartbeat info of every registered node whose heartbeat is still there. */
  public Future<Map<String, JsonObject>> nodes() {
    return r.send(Request.cmd(Command.ZRANGE).arg(keys.nodesZ()).arg(0).arg(-1)).compose(ids -> {
      if (ids.size() == 0) {
        return Future.succeededFuture(Map.of());
      }
      Request mget = Request.cmd(Command.MGET);
      ids.forEach(id -> mget.arg(keys.heartbeat(id.toString())));
      return r.send(mget).map(infos -> {
        Map<String, JsonObject> out = new LinkedHashMap<>();
        for (int i = 0; i < ids.size(); i++) {
          if (infos.get(i) != null) {
            out.put(ids.get(i).toString(), new JsonObject(infos.get(i).toString()));
          }
        }
        return out;
      });
    });
  }

  /** True when the caller leads the role (it took or renewed the lease); see lease.lua. */
  public Future<Boolean> lease(LeaderRole role, String nodeId, Duration lease, Duration grace) {
    return r.run(r.scripts().lease, List.of(keys.lock1(role), keys.lock2(role)),
        List.of(nodeId, Long.toString(lease.toMillis()), Long.toString(grace.toMillis())))
        .map(reply -> reply.toInteger() == 1);
  }

  /** Frees a role's lease if one of the given (departed or stopping) nodes holds it; true when it did. */
  public Future<Boolean> breakLease(LeaderRole role, Collection<String> gone) {
    return r.run(r.scripts().leaseBreak, List.of(keys.lock1(role), keys.lock2(role)), List.copyOf(gone))
        .map(reply -> reply.toInteger() == 1);
  }

  /** The nodeId holding a role's lease, or null. */
  public Future<String> leader(LeaderRole role) {
    return r.send(Request.cmd(Command.GET).arg(keys.lock1(role))).map(Replies::str);
  }
}
