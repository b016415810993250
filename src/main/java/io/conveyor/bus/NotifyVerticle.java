package io.conveyor.bus;

import io.conveyor.model.Completion;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.StoreContext;
import io.conveyor.redis.Subscriptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The Redis notify channels (one per partition), republished on this node's event bus: a client waiting here learns of a
 * transaction completed on any node. The subscriptions have a connection of their own per master, named
 * conveyor-notify:<nodeId>; a partition whose subscription drops is subscribed again on its own (Subscriptions), so
 * a Redis Cluster master that is down silences only its own partitions' notifications. What was published in a
 * partition while it was not subscribed is lost to this node: once it is subscribed again, the node's waiters are
 * told (NOTIFY_RESUBSCRIBED) and read what they wait for again.
 */
public final class NotifyVerticle extends VerticleBase {
  private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);
  private final RedisAccess redis;
  private final String nodeId;
  private StoreContext context;
  private Subscriptions subscriptions;
  /** The partitions subscribed once; and whether start is over (a partition first subscribed after it had a gap). */
  private final Set<Integer> subscribedOnce = new HashSet<>();
  private boolean started;

  public NotifyVerticle(RedisAccess redis, String nodeId) {
    this.redis = redis;
    this.nodeId = nodeId;
  }

  @Override
  public Future<?> start() {
    context = redis.open(vertx);
    Map<Integer, String> channels = new HashMap<>();
    context.keys().all().forEach(p -> channels.put(p, context.keys().notifyChannel(p)));
    subscriptions = new Subscriptions(vertx, context, "conveyor-notify:" + nodeId, channels,
        (p, text) -> onMessage(text), this::subscribed);
    return subscriptions.start().onSuccess(v -> started = true);
  }

  /**
   * Partition p's subscription is in place. Again, or for the first time after start (it failed then): what was
   * published there before may not have been heard, so this node's waiters for its transactions look again.
   */
  private void subscribed(int p) {
    if (!subscribedOnce.add(p) || started) {
      vertx.eventBus().publish(Addresses.NOTIFY_RESUBSCRIBED, p, LOCAL);
    }
  }

  /**
   * completed:<txId>:<status>:<owner> (a line each: a complete call's completions come in one message) becomes
   * TxCompleted {txId, status} on conveyor.tx.completed (every owner's) and on conveyor.tx.completed.<owner> (that owner's alone, which a bridge client of that owner may listen to),
   * on this node only. webhook:<txId> (a webhook became due) goes to the local webhook verticle, cancel:<txId>
   * (a running transaction's owner asked to cancel it) to the local dequeue verticles.
   */
  private void onMessage(String text) {
    if (text.startsWith("webhook:")) {
      vertx.eventBus().publish(Addresses.WEBHOOKS_DUE, text.substring("webhook:".length()), LOCAL);
      return;
    }
    if (text.startsWith("cancel:")) {
      vertx.eventBus().publish(Addresses.TX_CANCEL_REQUESTED, text.substring("cancel:".length()), LOCAL);
      return;
    }
    Completion.each(text, c -> {
      Object event = new TxCompleted(c.txId(), c.status()).toJson();
      vertx.eventBus().publish(Addresses.TX_COMPLETED, event, LOCAL);
      vertx.eventBus().publish(Addresses.completedFor(c.owner()), event, LOCAL);
    });
  }

  @Override
  public Future<?> stop() {
    return subscriptions.close().eventually(() -> context.close());
  }
}
