package io.conveyor.bus;

import io.conveyor.model.Completion;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.RedisLink;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redis notify channels (one per partition), republished on this node's event bus: a client waiting here learns of a
 * transaction completed on any node. The subscription has a connection of its own, named
 * conveyor-notify:<nodeId>; when it drops, the verticle subscribes again (1 s apart at most).
 */
public final class NotifyVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(NotifyVerticle.class);
  private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);
  private final RedisAccess redis;
  private final String nodeId;
  private RedisLink link;
  private RedisConnection connection;
  private boolean stopping;

  public NotifyVerticle(RedisAccess redis, String nodeId) {
    this.redis = redis;
    this.nodeId = nodeId;
  }

  @Override
  public Future<?> start() {
    link = redis.open(vertx).link();
    return subscribe();
  }

  private Future<Void> subscribe() {
    return link.dedicated().compose(c -> {
      connection = c;
      c.handler(this::onMessage);
      c.endHandler(v -> lost(c, "closed"));
      c.exceptionHandler(e -> lost(c, e.getMessage()));
      return c.send(Request.cmd(Command.CLIENT).arg("SETNAME").arg("conveyor-notify:" + nodeId))
          .compose(ok -> {
            // one command per partition's channel: a shard channel is subscribed on its slot's master
            java.util.List<Future<io.vertx.redis.client.Response>> each = new java.util.ArrayList<>();
            redis.keys().all().forEach(p -> each.add(c.send(redis.keys().subscribe(redis.keys().notifyChannel(p)))));
            return Future.all(each);
          })
          .onFailure(e -> c.close());
    }).mapEmpty();
  }

  private void lost(RedisConnection c, String why) {
    if (stopping || c != connection) {
      return;
    }
    connection = null;
    c.close(); // back to the pool, which drops it: a lost connection must not count as lent forever
    log.warn("the notify subscription was lost ({}); subscribing again", why);
    resubscribe(100);
  }

  private void resubscribe(long delayMs) {
    vertx.setTimer(delayMs, t -> {
      if (stopping) {
        return;
      }
      subscribe().onSuccess(v -> log.info("notify subscription restored"))
          .onFailure(e -> resubscribe(Math.min(1000, delayMs * 2)));
    });
  }

  /**
   * completed:<txId>:<status>:<owner> becomes TxCompleted {txId, status} on conveyor.tx.completed (every owner's) and on
   * conveyor.tx.completed.<owner> (that owner's alone, which a bridge client of that owner may listen to),
   * on this node only. webhook:<txId> (a webhook became due) goes to the local webhook verticle, cancel:<txId>
   * (a running transaction's owner asked to cancel it) to the local dequeue verticles.
   */
  private void onMessage(Response push) {
    if (!io.conveyor.redis.Keys.isMessage(push)) {
      return;
    }
    String text = push.get(2).toString();
    if (text.startsWith("webhook:")) {
      vertx.eventBus().publish(Addresses.WEBHOOKS_DUE, text.substring("webhook:".length()), LOCAL);
      return;
    }
    if (text.startsWith("cancel:")) {
      vertx.eventBus().publish(Addresses.TX_CANCEL_REQUESTED, text.substring("cancel:".length()), LOCAL);
      return;
    }
    Completion c = Completion.parse(text);
    if (c != null) {
      Object event = new TxCompleted(c.txId(), c.status()).toJson();
      vertx.eventBus().publish(Addresses.TX_COMPLETED, event, LOCAL);
      vertx.eventBus().publish(Addresses.completedFor(c.owner()), event, LOCAL);
    }
  }

  @Override
  public Future<?> stop() {
    stopping = true;
    return link.close();
  }
}
