package io.conveyor.redis;

import io.conveyor.config.ConfigException;
import io.vertx.core.Future;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;

/**
 * The keyspace's layout: how many partitions it was made with (layoutH, written by the first node). The
 * number is fixed for a keyspace's life (every txId names its partition), so a node configured with another
 * refuses to start, and so does a node with several partitions on a keyspace that holds data in the
 * one-partition layout (whose keys it would never read).
 */
public final class LayoutStore extends Store {
  public LayoutStore(StoreContext r) {
    super(r);
  }

  /** Records this node's layout if the keyspace has none yet; fails with a ConfigException if it differs. */
  public Future<Void> check() {
    return (keys.partitions() > 1 ? shardPubSub() : Future.<Void>succeededFuture()).compose(v -> layout());
  }

  /** Several partitions publish on shard channels (SPUBLISH, SSUBSCRIBE): Redis 7 or later. */
  private Future<Void> shardPubSub() {
    return r.send(Request.cmd(Command.INFO).arg("server")).compose(info -> {
      for (String line : info.toString().split("\\r?\\n")) {
        if (line.startsWith("redis_version:")) {
          String version = line.substring("redis_version:".length()).trim();
          int major = Integer.parseInt(version.replaceAll("\\..*", ""));
          return major >= 7 ? Future.succeededFuture() : Future.failedFuture(new ConfigException(
              "config key redis.partitions (env CONVEYOR_REDIS_PARTITIONS): above 1 needs Redis 7 or later "
              + "(shard channels), and this Redis is " + version));
        }
      }
      return Future.succeededFuture();
    });
  }

  private Future<Void> layout() {
    int want = keys.partitions();
    // the other layout's layoutH: a one-partition node must not miss a partitioned keyspace, nor the reverse
    String otherLayout = want == 1 ? new Keys(keys.prefix(), 2).layoutH() : new Keys(keys.prefix()).layoutH();
    return get(otherLayout).compose(other -> {
      if (other != null) {
        return refused(Integer.parseInt(other));
      }
      return get(keys.layoutH());
    }).compose(found -> {
      if (found != null) {
        return Integer.parseInt(found) == want ? Future.succeededFuture() : refused(Integer.parseInt(found));
      }
      Future<Void> clean = want == 1 ? Future.succeededFuture() : oldData();
      return clean.compose(v -> r.send(Request.cmd(Command.HSETNX).arg(keys.layoutH()).arg("partitions")
              .arg(want)))
          .compose(set -> get(keys.layoutH()))
          .compose(now -> Integer.parseInt(now) == want ? Future.succeededFuture() : refused(Integer.parseInt(now)));
    });
  }

  private Future<String> get(String key) {
    return r.send(Request.cmd(Command.HGET).arg(key).arg("partitions")).map(Replies::str);
  }

  /** A keyspace written before layoutH existed is one partition's: its nodes and pipelines say so. */
  private Future<Void> oldData() {
    Keys old = new Keys(keys.prefix());
    return r.send(Request.cmd(Command.EXISTS).arg(old.nodesZ()))
        .compose(n -> n.toInteger() > 0 ? Future.succeededFuture(n)
            : r.send(Request.cmd(Command.EXISTS).arg(old.pipelinesS())))
        .compose(n -> n.toInteger() > 0 ? refused(1) : Future.succeededFuture());
  }

  private <T> Future<T> refused(int found) {
    return Future.failedFuture(new ConfigException("config key redis.partitions (env CONVEYOR_REDIS_PARTITIONS): "
        + "the keyspace under prefix " + keys.prefix() + " was made with " + found + " partition(s), and this node "
        + "has " + keys.partitions() + ". The number is fixed when a keyspace is made: set redis.partitions to "
        + found + ", or use another redis.prefix (a new keyspace) and let the old one drain"));
  }
}
