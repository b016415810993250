package io.conveyor.bus;

import io.conveyor.redis.AwaitStore;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.time.Duration;

/**
 * Answers the node's flow/await steps (Addresses.EVENT_AWAIT, local): begins or ends a wait in Redis on its own
 * context (event-wait.lua), so a step needs no Redis of its own and holds no worker while it waits.
 */
public final class AwaitVerticle extends VerticleBase {
  private final RedisAccess redis;
  private final Duration retention;
  private StoreContext context;
  private AwaitStore store;

  /** retention: events.retention, how long a delivery is kept for a step that looks again. */
  public AwaitVerticle(RedisAccess redis, Duration retention) {
    this.redis = redis;
    this.retention = retention;
  }

  @Override
  public Future<?> start() {
    context = redis.open(vertx);
    store = new AwaitStore(context);
    return vertx.eventBus().<JsonObject>localConsumer(Addresses.EVENT_AWAIT, this::answer).completion();
  }

  private void answer(Message<JsonObject> m) {
    JsonObject q = m.body();
    store.await(q.getString("owner"), q.getString("name"), q.getString("key"), q.getString("waiter"),
            Duration.ofMillis(q.getLong("timeoutMs")), retention, q.getBoolean("ending"))
        .onSuccess(f -> m.reply(new JsonObject().put("code", f.code().name()).put("id", f.eventId())
            .put("payload", f.payload() == null ? null : io.vertx.core.json.Json.decodeValue(f.payload()))))
        .onFailure(e -> m.fail(500, "event-wait: " + e.getMessage()));
  }

  @Override
  public Future<?> stop() {
    return context.close();
  }
}
