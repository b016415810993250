package io.conveyor.redis;

import io.vertx.core.Vertx;
import io.vertx.redis.client.RedisOptions;
import java.time.Clock;
import java.time.Duration;

/**
 * One per node: where Redis is, the key names, the scripts, the clock and the meter. Each verticle opens a
 * StoreContext of its own (a link bound to its context) and builds the stores it uses on it.
 */
public final class RedisAccess {
  private final RedisOptions options;
  private final Duration timeout;
  private final Keys keys;
  private final Scripts scripts;
  private final Clock clock;
  private final ScriptMeter meter;

  public RedisAccess(RedisOptions options, Duration timeout, Keys keys, Scripts scripts, Clock clock,
                     ScriptMeter meter) {
    this.options = options;
    this.timeout = timeout;
    this.keys = keys;
    this.scripts = scripts;
    this.clock = clock;
    this.meter = meter;
  }

  /** A context for one verticle (or one client thread): a link of its own. */
  public StoreContext open(Vertx vertx) {
    return new StoreContext(new RedisLink(vertx, options, timeout).meter(meter), keys, scripts, clock);
  }

  public Keys keys() {
    return keys;
  }

  public Scripts scripts() {
    return scripts;
  }
}
