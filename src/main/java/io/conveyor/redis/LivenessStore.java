package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Which nodes live (heartbeats, registration), taking over dead ones, and the leases of leader-only roles. */
public final class LivenessStore extends Store {
  public LivenessStore(StoreContext r) {
    super(r);
  }

  /** Registers this node (at start, or again after it was taken over) and writes its heartbeat. */
  public Future<Void> register(String nodeId, JsonObject info, Duration ttl) {
    return beat(nodeId, info, ttl, "register").mapEmpty();
  }

  /**
   * Writes the heartbeat of a node that believes it is registered: OK, LATE (it had expired, but nobody took
   * the node over) or FENCED (the node was taken over; nothing written), with the live nodes' info when not
   * FENCED. See heartbeat.lua.
   */
  public Future<Beat> heartbeat(String nodeId, JsonObject info, Duration ttl) {
    return beat(nodeId, info, ttl, "beat");
  }

  /** What a heartbeat answered, and the live nodes (nodeId → heartbeat info) it saw. */
  public record Beat(Code code, Map<String, JsonObject> view) {
  }

  private Future<Beat> beat(String nodeId, JsonObject info, Duration ttl, String mode) {
    return r.run(r.scripts().heartbeat, List.of(keys.heartbeat(nodeId), keys.nodesZ()),
        List.of(nodeId, info.encode(), Long.toString(ttl.toMillis()), r.now(), mode, keys.heartbeatPrefix(),
            Keys.HEARTBEAT_SUFFIX)).map(reply -> {
              Map<String, JsonObject> view = new LinkedHashMap<>();
              if (reply.type() == io.vertx.redis.client.ResponseType.MULTI) {
                for (int i = 1; i + 1 < reply.size(); i += 2) {
                  try {
                    view.put(reply.get(i).toString(), new JsonObject(reply.get(i + 1).toString()));
                  } catch (RuntimeException unreadable) {
                    // another version's or a hand-written heartbeat: left out of the view
                  }
                }
              }
              return new Beat(Code.of(reply), view);
            });
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
   * outage) and clears processingZ entries older than staleAfter that have no live owner: judge.lua finds
   * the dead, reap.lua takes their work over in each partition (garbage is looked for in the partitions
   * given, every one when a node died), and only then do they leave deadZ.
   */
  public Future<Reaped> reap(boolean judge, Duration staleAfter, Collection<Integer> garbageIn) {
    return r.run(r.scripts().judge, List.of(keys.nodesZ(), keys.deadZ()),
        List.of(r.now(), keys.heartbeatPrefix(), Keys.HEARTBEAT_SUFFIX, judge ? "1" : "0")).compose(verdict -> {
          List<String> dead = new ArrayList<>();
          verdict.get(0).forEach(n -> dead.add(n.toString()));
          List<String> live = new ArrayList<>();
          verdict.get(1).forEach(n -> live.add(n.toString()));
          Collection<Integer> partitions = dead.isEmpty() ? garbageIn : keys.all();
          List<Future<Response>> each = new ArrayList<>();
          for (int p : partitions) {
            List<String> args = new ArrayList<>(List.of(r.now(), Long.toString(staleAfter.toMillis()),
                keys.stateH(p, ""), keys.inflightZ(p, ""), keys.qInZ(p, ""), keys.qRingL(p, ""), p == 0 ? "1" : "0",
                Integer.toString(dead.size())));
            args.addAll(dead);
            args.addAll(live);
            each.add(r.run(r.scripts().reap, List.of(keys.processingZ(p), keys.eventsL(p), keys.exceptionZ(p)),
                args));
          }
          return Future.all(each).compose(all -> {
            Map<String, Integer> nodes = new LinkedHashMap<>();
            dead.forEach(n -> nodes.put(n, 0));
            int garbage = 0;
            for (int i = 0; i < all.size(); i++) {
              Response reply = all.resultAt(i);
              for (int j = 0; j + 1 < reply.size(); j += 2) {
                String name = reply.get(j).toString();
                if (name.equals("garbage")) {
                  garbage += reply.get(j + 1).toInteger();
                } else {
                  nodes.merge(name, reply.get(j + 1).toInteger(), Integer::sum);
                }
              }
            }
            Reaped reaped = new Reaped(nodes, garbage);
            if (dead.isEmpty()) {
              return Future.succeededFuture(reaped);
            }
            Request zrem = Request.cmd(Command.ZREM).arg(keys.deadZ());
            dead.forEach(zrem::arg);
            return r.send(zrem).map(x -> reaped);
          });
        });
  }

  /** The same, looking for garbage in every partition. */
  public Future<Reaped> reap(boolean judge, Duration staleAfter) {
    return reap(judge, staleAfter, keys.all());
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

  /**
   * True when the caller leads the role (it took or renewed the lease); see lease.lua. partition is -1 for
   * the cluster-wide lease (the reaper's judging), else the role in that partition.
   */
  public Future<Boolean> lease(LeaderRole role, int partition, String nodeId, Duration lease, Duration grace) {
    return r.run(r.scripts().lease, lockKeys(role, partition),
        List.of(nodeId, Long.toString(lease.toMillis()), Long.toString(grace.toMillis())))
        .map(reply -> reply.toInteger() == 1);
  }

  /** Frees a role's lease if one of the given (departed or stopping) nodes holds it; true when it did. */
  public Future<Boolean> breakLease(LeaderRole role, int partition, Collection<String> gone) {
    return r.run(r.scripts().leaseBreak, lockKeys(role, partition), List.copyOf(gone))
        .map(reply -> reply.toInteger() == 1);
  }

  /** The nodeId holding a role's lease (-1: the cluster-wide one), or null. */
  public Future<String> leader(LeaderRole role, int partition) {
    return r.send(Request.cmd(Command.GET).arg(lockKeys(role, partition).get(0))).map(Replies::str);
  }

  private List<String> lockKeys(LeaderRole role, int partition) {
    return partition < 0 ? List.of(keys.lock1(role), keys.lock2(role))
        : List.of(keys.lock1(role, partition), keys.lock2(role, partition));
  }
}
