package io.conveyor.redis;

import static io.conveyor.redis.Replies.str;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.util.ArrayList;
import java.util.List;

/**
 * Owners' limits set at run time (the admin API): a weight for fair share, a concurrency cap and a rate limit
 * per node group. The cluster-wide record (ownerH) is copied into every partition, where start and dequeue
 * read it (owner-put.lua; copies never go back in time, so a node may copy again whenever it doubts them).
 */
public final class OwnerStore extends Store {
  public OwnerStore(StoreContext r) {
    super(r);
  }

  /**
   * An owner's limits; null fields are not set (the weight then comes from transactions.ownerWeights, else 1;
   * no cap; no rate limit). updated is when they were set (ms), 0 when never.
   */
  public record Limits(Integer weight, Integer maxConcurrency, String rateLimit, Integer maxLive,
                       Integer maxPayloadBytes, long updated) {
    /** Without maxLive and maxPayloadBytes (limits.maxLive and limits.maxPayloadBytes apply). */
    public Limits(Integer weight, Integer maxConcurrency, String rateLimit, long updated) {
      this(weight, maxConcurrency, rateLimit, null, null, updated);
    }

    public boolean empty() {
      return weight == null && maxConcurrency == null && rateLimit == null && maxLive == null
          && maxPayloadBytes == null;
    }

    List<String> args(long at, String owner) {
      return List.of(Long.toString(at), text(weight), text(maxConcurrency),
          rateLimit == null ? "" : Double.toString(io.conveyor.model.Pipeline.perSecond(rateLimit)), owner,
          rateLimit == null ? "" : rateLimit, text(maxLive), text(maxPayloadBytes));
    }

    private static String text(Integer n) {
      return n == null ? "" : n.toString();
    }
  }

  /** Sets an owner's limits, replacing what was set (all null: clears them), then copies them to every partition. */
  public Future<Void> put(String owner, Limits limits) {
    long at = r.clock().millis();
    return r.run(r.scripts().ownerPut, List.of(keys.ownerH(owner), keys.ownersS()), limits.args(at, owner))
        .compose(v -> copy(owner));
  }

  /** An owner's limits (all null when none are set). */
  public Future<Limits> get(String owner) {
    return r.send(Request.cmd(Command.HMGET).arg(keys.ownerH(owner)).arg("weight").arg("cap").arg("rateLimit")
        .arg("updated").arg("maxLive").arg("maxPayloadBytes")).map(OwnerStore::limits);
  }

  private static Limits limits(Response f) {
    return new Limits(f.get(0) == null ? null : f.get(0).toInteger(), f.get(1) == null ? null : f.get(1).toInteger(),
        str(f.get(2)), f.get(4) == null ? null : f.get(4).toInteger(), f.get(5) == null ? null : f.get(5).toInteger(),
        f.get(3) == null ? 0 : f.get(3).toLong());
  }

  /** Every owner with a limit set: {owner: {weight, maxConcurrency, rateLimit}}, sorted by owner. */
  public Future<JsonObject> list() {
    return r.send(Request.cmd(Command.SMEMBERS).arg(keys.ownersS())).compose(names -> {
      List<String> owners = new ArrayList<>();
      names.forEach(n -> owners.add(n.toString()));
      owners.sort(null);
      List<Future<Limits>> each = owners.stream().map(this::get).toList();
      return Future.all(each).map(v -> {
        JsonObject out = new JsonObject();
        for (int i = 0; i < owners.size(); i++) {
          out.put(owners.get(i), json(each.get(i).result()));
        }
        return out;
      });
    });
  }

  public static JsonObject json(Limits l) {
    JsonObject j = new JsonObject().put("weight", l.weight()).put("maxConcurrency", l.maxConcurrency())
        .put("rateLimit", l.rateLimit());
    if (l.maxLive() != null) {
      j.put("maxLive", l.maxLive());
    }
    if (l.maxPayloadBytes() != null) {
      j.put("maxPayloadBytes", l.maxPayloadBytes());
    }
    return j;
  }

  /** Copies an owner's record into every partition (nothing to do with one partition). */
  public Future<Void> copy(String owner) {
    if (keys.partitions() == 1) {
      return Future.succeededFuture();
    }
    return get(owner).compose(l -> {
      if (l.updated() == 0) {
        return Future.succeededFuture();
      }
      List<Future<Response>> copies = new ArrayList<>();
      for (int p : keys.all()) {
        String copy = keys.ownerInPartitionH(p, owner);
        copies.add(r.run(r.scripts().ownerPut, List.of(copy, copy), l.args(l.updated(), owner)));
      }
      return Future.all(copies).mapEmpty();
    });
  }

  /** Copies every owner with limits into every partition (see copy). */
  public Future<Void> copyAll() {
    return copyEach(keys.ownersS(), this::copy);
  }
}
