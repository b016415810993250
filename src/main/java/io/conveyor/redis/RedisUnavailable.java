package io.conveyor.redis;

import io.vertx.redis.client.Response;
import io.vertx.redis.client.ResponseType;
import java.util.Set;

/**
 * Redis did not answer: no connection, no reply in time, or a server that cannot serve now (loading,
 * busy, read-only, out of memory, no master). Worth a retry later; anything else Redis refuses (a script
 * error, a wrong type) is a bug, not an outage, and passes through unchanged.
 */
public final class RedisUnavailable extends RuntimeException {
  /** Error replies that say "not now", not "never". */
  private static final Set<String> TRANSIENT = Set.of("LOADING", "BUSY", "MASTERDOWN", "READONLY", "OOM",
      "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "MISCONF");

  public RedisUnavailable(Throwable cause) {
    super("Redis did not answer: " + cause.getMessage(), cause);
  }

  /** The failure of a command as callers should see it. */
  static Throwable classify(Throwable e) {
    if (e instanceof RedisUnavailable) {
      return e;
    }
    if (e instanceof Response r && r.type() == ResponseType.ERROR) {
      String m = String.valueOf(e.getMessage());
      int space = m.indexOf(' ');
      return TRANSIENT.contains(space < 0 ? m : m.substring(0, space)) ? new RedisUnavailable(e) : e;
    }
    return new RedisUnavailable(e);
  }
}
