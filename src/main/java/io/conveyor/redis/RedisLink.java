package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One pipelined Redis connection for the verticle that owns it: every command goes out at once and replies
 * come back in order, so many transactions share one round trip. A broken connection is replaced on the
 * next command. Use it from its owner's context only; blocking commands and SUBSCRIBE need their own.
 */
public final class RedisLink {
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
  private final Vertx vertx;
  private final RedisOptions options;
  private final long timeoutMs;
  private Redis client;
  private Future<RedisConnection> connection;
  private ScriptMeter meter = ScriptMeter.NONE;

  /** Script round trips on this link are timed into this meter. */
  public RedisLink meter(ScriptMeter m) {
    this.meter = m;
    return this;
  }

  public ScriptMeter meter() {
    return meter;
  }

  public RedisLink(Vertx vertx, RedisOptions options) {
    this(vertx, options, DEFAULT_TIMEOUT);
  }

  /** A command with no reply within the timeout fails, and its connection is dropped (it may hang). */
  public RedisLink(Vertx vertx, RedisOptions options, Duration timeout) {
    this.vertx = vertx;
    this.options = options;
    this.client = Redis.createClient(vertx, options);
    this.timeoutMs = timeout.toMillis();
  }

  /** Options for a node's links, from the redis section of config. */
  public static RedisOptions options(String url, int maxPipelined) {
    return new RedisOptions().setConnectionString(url).setMaxWaitingHandlers(maxPipelined)
        .setMaxPoolSize(4).setMaxPoolWaiting(maxPipelined);
  }

  /** Fails with RedisUnavailable when Redis did not answer, or with Redis's own error when it refused. */
  public Future<Response> send(Request request) {
    Future<RedisConnection> used = connection();
    return used.compose(c -> c.send(request)).timeout(timeoutMs, TimeUnit.MILLISECONDS)
        .recover(e -> {
          if (e instanceof TimeoutException && connection == used) {
            replaceClient();
          }
          return Future.failedFuture(RedisUnavailable.classify(e));
        });
  }

  /**
   * A hung connection must really close: the client pools its connections and would hand the same one
   * back, so the whole client goes (its dedicated connections fail too, and their owners reconnect).
   */
  private void replaceClient() {
    Redis old = client;
    client = Redis.createClient(vertx, options);
    connection = null;
    old.close();
  }

  /** A connection of its own, for a blocking command or a subscription. */
  public Future<RedisConnection> dedicated() {
    return client.connect();
  }

  private Future<RedisConnection> connection() {
    if (connection == null || connection.failed()) {
      Future<RedisConnection> attempt = client.connect();
      connection = attempt;
      attempt.onSuccess(c -> {
        c.exceptionHandler(e -> forget(attempt, c));
        c.endHandler(v -> forget(attempt, c));
      });
    }
    return connection;
  }

  /** A broken connection is closed, not only dropped: the pool would otherwise count it as lent forever. */
  private void forget(Future<RedisConnection> broken, RedisConnection c) {
    if (connection == broken) {
      connection = null;
    }
    c.close();
  }

  public Future<Void> close() {
    connection = null;
    return client.close();
  }
}
