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
 * its own. Messages are `completed:<txId>:<status>:<owner>`; with RESP3 they arrive as push replies, with RESP2
 * as arrays, both shaped ["message", channel, payload].
 */
final class Completions {
  /** Told of each completion with the System.nanoTime() at which its message arrived. */
  interface Listener {
    void completed(String txId, String status, long arrivedNanos);
  }

  private final RedisLink link;
  private final String channel;
  private final String probe = "bench-probe:" + System.nanoTime();
  private final Promise<Void> probed = Promise.promise();
  private RedisConnection connection;
  private Listener listener = (txId, status, nanos) -> { };

  Completions(RedisLink link, String channel) {
    this.link = link;
    this.channel = channel;
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
          return c.send(Request.cmd(Command.SUBSCRIBE).arg(channel));
        })
        .compose(r -> link.send(Request.cmd(Command.PUBLISH).arg(channel).arg(probe)))
        .compose(r -> probed.future());
  }

  private void onMessage(Response r) {
    long now = System.nanoTime();
    if (r == null || r.size() < 3 || !"message".equals(String.valueOf(r.get(0)))) {
      return; // subscribe confirmations and anything else that is not a message
    }
    String payload = String.valueOf(r.get(2));
    io.conveyor.model.Completion c = io.conveyor.model.Completion.parse(payload);
    if (c != null) {
      listener.completed(c.txId(), c.status(), now);
    } else if (payload.equals(probe)) {
      probed.tryComplete();
    }
  }

  Future<Void> close() {
    return connection == null ? Future.succeededFuture() : connection.close();
  }
}
