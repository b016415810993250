package io.conveyor.bench;

import io.conveyor.redis.RedisLink;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;

/**
 * Learns of completions the way a client would: a subscription to the notify channel on a connection of
 * its own. Messages are lines of `completed:<txId>:<status>:<owner>` (one per completion of a call); with RESP3
 * they arrive as push replies, with RESP2 as arrays, both shaped ["message", channel, payload].
 */
final class Completions {
  /** Told of each completion with the System.nanoTime() at which its message arrived. */
  interface Listener {
    void completed(String txId, String status, long arrivedNanos);
  }

  private final RedisLink link;
  private final java.util.List<String> channels;
  private final String probe = "bench-probe:" + System.nanoTime();
  private final Promise<Void> probed = Promise.promise();
  private RedisConnection connection;
  private Listener listener = (txId, status, nanos) -> { };

  private final io.conveyor.redis.Keys keys;

  /** channels: the notify channel of every partition (a probe goes out on the first). */
  Completions(RedisLink link, io.conveyor.redis.Keys keys) {
    this.link = link;
    this.keys = keys;
    this.channels = keys.all().stream().map(keys::notifyChannel).toList();
  }

  void listener(Listener l) {
    this.listener = l;
  }

  /**
   * Subscribes, then publishes a probe and waits for it to come back: only then is it certain that no
   * completion can be missed, whatever the client does with the SUBSCRIBE confirmation.
   */
  Future<Void> subscribe() {
    return link.dedicated()
        .compose(c -> {
          connection = c;
          c.handler(this::onMessage);
          java.util.List<Future<Response>> each = new java.util.ArrayList<>();
          channels.forEach(ch -> each.add(c.send(keys.subscribe(ch))));
          return Future.all(each);
        })
        .compose(r -> link.send(Request.cmd(keys.shardChannels() ? Command.SPUBLISH : Command.PUBLISH)
            .arg(channels.get(0)).arg(probe)))
        .compose(r -> probed.future());
  }

  private void onMessage(Response r) {
    long now = System.nanoTime();
    if (!io.conveyor.redis.Keys.isMessage(r)) {
      return; // subscribe confirmations and anything else that is not a message
    }
    String payload = String.valueOf(r.get(2));
    if (payload.startsWith("completed:")) {
      io.conveyor.model.Completion.each(payload, c -> listener.completed(c.txId(), c.status(), now));
    } else if (payload.equals(probe)) {
      probed.tryComplete();
    }
  }

  Future<Void> close() {
    return connection == null ? Future.succeededFuture() : connection.close();
  }
}
