package io.conveyor.testing;

import io.conveyor.redis.Keys;
import io.conveyor.redis.RedisLink;
import io.conveyor.redis.Scripts;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Vertx;

/** The stores on their own prefix and a hand-moved clock: the scripts run exactly as the node runs them. */
public final class ScriptHarness implements AutoCloseable {
  public final String prefix = TestRedis.newPrefix();
  public final Keys keys = new Keys(prefix);
  public final MutableClock clock = new MutableClock(1_800_000_000_000L);
  public final Scripts scripts = new Scripts();
  public final Vertx vertx = Vertx.vertx();
  public final RedisLink link = new RedisLink(vertx, RedisLink.options(TestRedis.url(), 10_000));
  public final Stores store = new Stores(new StoreContext(link, keys, scripts, clock));

  @Override
  public void close() {
    TestRedis.drop(prefix);
    link.close().await();
    vertx.close().await();
  }
}
