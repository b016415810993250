package io.conveyor.bus;

import io.conveyor.metrics.NodeMetrics;
import io.conveyor.redis.EventStore;
import io.conveyor.redis.RedisAccess;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.util.HashSet;
import java.util.Set;

/**
 * Operational events, live: every second the node reads the events of every partition (eventsL) newer than the
 * last it saw and publishes each, oldest first, on conveyor.events on its own event bus (local only, as
 * completions are: every node reads them, so nothing needs to cross the cluster). Events are written by the
 * scripts, which cannot reach the event bus; a second is the most a listener waits. Each event it publishes is
 * counted by kind (conveyor_events_total{kind}: every node counts every partition's events, so an alert takes the
 * max over nodes), and each time this node fenced itself and registered again (conveyor_node_fenced_total).
 */
public final class EventsVerticle extends VerticleBase {
  private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);
  static final long PERIOD_MS = 1000;
  private final RedisAccess redis;
  private final NodeMetrics metrics;
  private EventStore events;
  private long timer;
  /** The newest time seen, and the events seen at exactly that time (several may share a millisecond). */
  private long lastTime;
  private Set<String> atLast = new HashSet<>();
  private boolean reading;

  public EventsVerticle(RedisAccess redis, NodeMetrics metrics) {
    this.redis = redis;
    this.metrics = metrics;
  }

  @Override
  public Future<?> start() {
    var context = redis.open(vertx);
    events = new EventStore(context);
    // what happened before the node started is history, not news
    lastTime = context.clock().millis();
    timer = vertx.setPeriodic(PERIOD_MS, t -> poll());
    return vertx.eventBus().localConsumer(Addresses.NODE_REGISTERED, m -> metrics.fenced()).completion();
  }

  private void poll() {
    if (reading) {
      return;
    }
    reading = true;
    events.read(new EventStore.Filter(null, null, null, lastTime, null, EventStore.MAX_LENGTH))
        .onComplete(ar -> {
          reading = false;
          if (ar.failed()) {
            return; // Redis is away: the next tick reads again, from the same point
          }
          var list = ar.result();
          for (int i = list.size() - 1; i >= 0; i--) {
            JsonObject e = list.getJsonObject(i);
            long t = e.getLong("time", 0L);
            String id = e.encode();
            if (t < lastTime || (t == lastTime && atLast.contains(id))) {
              continue;
            }
            if (t > lastTime) {
              lastTime = t;
              atLast = new HashSet<>();
            }
            atLast.add(id);
            metrics.event(e.getString("kind", "unknown"));
            vertx.eventBus().publish(Addresses.EVENTS, e, LOCAL);
          }
        });
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(timer);
    return Future.succeededFuture();
  }
}
