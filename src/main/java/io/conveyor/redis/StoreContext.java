package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Clock;
import java.util.List;

/**
 * What the stores of one verticle share: its pipelined link, the key names, the scripts and the clock.
 * Use it from that verticle's context only (see RedisLink).
 */
public record StoreContext(RedisLink link, Keys keys, Scripts scripts, Clock clock) {

  /** "now" for a script, from the injected clock. */
  String now() {
    return Long.toString(clock.millis());
  }

  Future<Response> run(LuaScript script, List<String> keys, List<String> args) {
    return Scripts.run(link, script, keys, args);
  }

  Future<Response> send(Request request) {
    return link.send(request);
  }

  public Future<Void> close() {
    return link.close();
  }
}
