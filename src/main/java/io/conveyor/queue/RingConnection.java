package io.conveyor.queue;

import io.conveyor.redis.StoreContext;
import io.conveyor.redis.Subscriptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's connection to its group's ring, of its own (it blocks): with one partition the node blocks on the
 * ring list there (BLPOP); a broken connection is replaced, one reconnect at a time. With several, one connection
 * cannot block on keys of many slots, so it subscribes to every partition's ring channel (a script publishes on it
 * when it rings), each partition on its own (Subscriptions): a partition whose master is down is subscribed again
 * alone while the others stay heard. Kept by the dequeue verticle on its own context; it tells it what it hears.
 */
final class RingConnection {
  private static final Logger log = LoggerFactory.getLogger(RingConnection.class);

  private final Vertx vertx;
  private final StoreContext redis;
  private final String nodeId;
  private final String group;
  private final Runnable reconnected;
  private final int parts;
  /** With several partitions: the ring channels' subscriptions; null with one. */
  private final Subscriptions subscriptions;
  /** With one partition: the connection that blocks on the ring list. */
  private RedisConnection connection;
  /** The connection is being replaced: no wait on it meanwhile. */
  private boolean lost;
  private boolean stopping;

  /**
   * rang hears a ring published in a partition (by subscription); subscribed, that a partition's subscription is
   * (again) in place, so work may have come there while nobody listened; reconnected, that a reconnect of the
   * one partition's blocking connection is over (or given up while stopping), so a take should go.
   */
  RingConnection(Vertx vertx, StoreContext redis, String nodeId, String group, IntConsumer rang,
                 IntConsumer subscribed, Runnable reconnected) {
    this.vertx = vertx;
    this.redis = redis;
    this.nodeId = nodeId;
    this.group = group;
    this.reconnected = reconnected;
    this.parts = redis.keys().partitions();
    Map<Integer, String> channels = new HashMap<>();
    for (int p = 0; p < parts; p++) {
      channels.put(p, redis.keys().qRingL(p, group));
    }
    this.subscriptions = parts == 1 ? null : new Subscriptions(vertx, redis, "conveyor-ring:" + nodeId, channels,
        (p, message) -> rang.accept(p), subscribed);
  }

  /**
   * Connects, under a name, so an operator (or a test) sees which node blocks on it; with several partitions,
   * subscribes to each one's ring channel (succeeds once one is subscribed; the others follow on their own).
   */
  Future<Void> connect() {
    if (subscriptions != null) {
      return subscriptions.start();
    }
    return redis.link().dedicated().compose(c -> c.send(Request.cmd(Command.CLIENT).arg("SETNAME")
        .arg("conveyor-ring:" + nodeId)).map(ok -> {
          connection = c;
          return (Void) null;
        }).onFailure(e -> c.close()));
  }

  /** Being replaced: a wait on it would go to a broken connection (one partition; with several, never). */
  boolean lost() {
    return lost;
  }

  /**
   * Blocks on partition 0's ring list for at most idleWait: a token (true) or the timeout (false). A failure
   * starts a reconnect, which says when it is over (reconnected).
   */
  Future<Boolean> await(Duration idleWait) {
    double seconds = idleWait.toMillis() / 1000.0;
    return connection.send(Request.cmd(Command.BLPOP).arg(redis.keys().qRingL(0, group)).arg(seconds))
        .map(r -> r != null)
        .onFailure(e -> {
          if (!stopping) {
            log.warn("waiting for work failed ({}); reconnecting", e.getMessage());
            reconnect();
          }
        });
  }

  /**
   * The connection broke: one reconnect at a time (a second would leave a connection nobody closes); tries
   * again every second until it connects or the node stops.
   */
  void reconnect() {
    if (lost) {
      return;
    }
    lost = true;
    // the broken connection goes back to its pool, which drops it; once only: a second close (after a failed
    // reconnect) would give a cluster connection's pooled connections back twice, and the pool throws
    RedisConnection broken = connection;
    connection = null;
    if (broken != null) {
      broken.close();
    }
    vertx.setTimer(1000, t -> connect().onComplete(c -> {
      lost = false;
      if (c.failed() && !stopping) {
        reconnect();
      } else {
        reconnected.run();
      }
    }));
  }

  /** The node stops: no more reconnects. */
  void stopping() {
    stopping = true;
  }

  Future<Void> close() {
    stopping = true;
    if (subscriptions != null) {
      return subscriptions.close();
    }
    return connection == null ? Future.succeededFuture() : connection.close();
  }
}
