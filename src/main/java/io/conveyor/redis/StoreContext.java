package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Clock;
import java.util.List;

/**
 * What the stores of one verticle share: its pipelined link, the key names, the scripts, the clock, and
 * how many replicas must hold a start or completion before it is answered. Use it from that verticle's
 * context only (see RedisLink).
 */
public record StoreContext(RedisLink link, Keys keys, Scripts scripts, Clock clock, Replicas replicas) {

  public StoreContext(RedisLink link, Keys keys, Scripts scripts, Clock clock) {
    this(link, keys, scripts, clock, Replicas.NONE);
  }

  /** "now" for a script, from the injected clock. */
  String now() {
    return Long.toString(clock.millis());
  }

  Future<Response> run(LuaScript script, List<String> keys, List<String> args) {
    return Scripts.run(link, scripts.sent(script), keys, args);
  }

  /** A script whose writes a failover must not drop: answered once the replicas have them (see Replicas). */
  Future<Response> runReplicated(LuaScript script, List<String> keys, List<String> args) {
    return replicas.count() == 0 ? run(script, keys, args) : Scripts.run(link, scripts.sent(script), keys, args, replicas);
  }

  Future<Response> send(Request request) {
    return link.send(request);
  }

  public Future<Void> close() {
    return link.close();
  }
}
