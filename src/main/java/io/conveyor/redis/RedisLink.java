package io.conveyor.redis;

import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisClientType;
import io.vertx.redis.client.RedisReplicas;
import io.vertx.redis.client.RedisRole;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One pipelined Redis connection for the verticle that owns it: every command goes out at once and replies
 * come back in order, so many transactions share one round trip. A broken connection is replaced on the
 * next command. Use it from its owner's context only; blocking commands and SUBSCRIBE need their own.
 */
public final class RedisLink {
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
  /** How long a cluster client keeps its slot map before it reads it again (see options). */
  static final long SLOT_CACHE_MS = 5_000;
  private final Vertx vertx;
  private final RedisOptions options;
  private final long timeoutMs;
  private final Ticker ticker;
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

  /** Elapsed time for the meter's round trips and the client's replacement pace. */
  public Ticker ticker() {
    return ticker;
  }

  public RedisLink(Vertx vertx, RedisOptions options) {
    this(vertx, options, DEFAULT_TIMEOUT);
  }

  /** A command with no reply within the timeout fails, and its connection is dropped (it may hang). */
  public RedisLink(Vertx vertx, RedisOptions options, Duration timeout) {
    this(vertx, options, timeout, Ticker.SYSTEM);
  }

  public RedisLink(Vertx vertx, RedisOptions options, Duration timeout, Ticker ticker) {
    this.vertx = vertx;
    this.options = options;
    this.client = Redis.createClient(vertx, options);
    this.timeoutMs = timeout.toMillis();
    this.ticker = ticker;
    this.lastReplaced = ticker.nanos() - 1_000_000_000L;
  }

  /** Options for a standalone Redis at url. */
  public static RedisOptions options(String url, int maxPipelined) {
    return new RedisOptions().setConnectionString(url).setMaxWaitingHandlers(maxPipelined)
        .setMaxPoolSize(4).setMaxPoolWaiting(maxPipelined);
  }

  /**
   * Options for a node's links, from the redis section of config. A Redis Cluster client routes each
   * command by its keys' slot, follows MOVED and ASK, and refreshes its slot map; a Sentinel client asks
   * the sentinels where the master is each time it connects, so a link that reconnects after a failover
   * finds the new master. Replicas are never read: every read must see the latest write.
   */
  public static RedisOptions options(io.conveyor.config.Config.Redis redis) {
    return options(redis, io.conveyor.config.Config.RedisTls.DEFAULTS);
  }

  /**
   * The same over TLS when the endpoints are rediss:// (TlsToRedis): reads the CA and client files, so call it at
   * start; a file that cannot be used is a ConfigException naming the setting.
   */
  public static RedisOptions options(io.conveyor.config.Config.Redis redis, io.conveyor.config.Config.RedisTls tls) {
    RedisOptions o = TlsToRedis.apply(options(redis.url(), redis.maxPipelined()), redis, tls);
    switch (redis.mode()) {
      // every link has a client of its own, and each client reads the slot map again once its copy is older
      // than the cache TTL: 1 s (the default) cost an idle node 6 CLUSTER SLOTS a second. A MOVED reply
      // refreshes it at once; only a master that died without one is tried for up to 5 s longer
      case CLUSTER -> o.setType(RedisClientType.CLUSTER).setEndpoints(redis.endpoints())
          .setUseReplicas(RedisReplicas.NEVER).setHashSlotCacheTTL(SLOT_CACHE_MS).setTopologyCacheTTL(SLOT_CACHE_MS);
      case SENTINEL -> o.setType(RedisClientType.SENTINEL).setEndpoints(redis.endpoints())
          .setMasterName(redis.masterName()).setRole(RedisRole.MASTER);
      default -> o.setType(RedisClientType.STANDALONE);
    }
    return o;
  }

  /** Fails with RedisUnavailable when Redis did not answer, or with Redis's own error when it refused. */
  public Future<Response> send(Request request) {
    Future<RedisConnection> used = connection();
    return used.compose(c -> c.send(request)).timeout(timeoutMs, TimeUnit.MILLISECONDS)
        .recover(e -> {
          dropIfBroken(used, e);
          return Future.failedFuture(RedisUnavailable.classify(e));
        });
  }

  /**
   * Sends the requests together on one connection (in a Redis Cluster: to the master of their keys' slot,
   * so a keyless command such as WAIT goes where the script before it ran); fails as send does.
   */
  public Future<List<Response>> batch(List<Request> requests) {
    Future<RedisConnection> used = connection();
    return used.compose(c -> c.batch(requests)).timeout(timeoutMs, TimeUnit.MILLISECONDS)
        .recover(e -> {
          dropIfBroken(used, e);
          return Future.failedFuture(RedisUnavailable.classifyBatch(e));
        });
  }

  /**
   * A timeout replaces the client (the connection may hang). A server that turned read-only was a master
   * and is one no more (a failover): the connection is dropped, so the next one goes to the new master.
   */
  private void dropIfBroken(Future<RedisConnection> used, Throwable e) {
    if (connection == used) {
      if (e instanceof TimeoutException) {
        replaceClient();
      } else if (String.valueOf(e.getMessage()).matches("(?s)(ERR \\[\\d+] )?READONLY.*") && used.succeeded()) {
        forget(used, used.result());
      }
    }
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
    return client.connect().onFailure(e -> connectFailed());
  }

  /**
   * The shared connection, or a new attempt. The attempt is returned, not the field: a connect that fails at
   * once runs connectFailed before this returns, and that may replace the client and clear the field.
   */
  private Future<RedisConnection> connection() {
    Future<RedisConnection> current = connection;
    if (current != null && !current.failed()) {
      return current;
    }
    Future<RedisConnection> attempt = client.connect();
    connection = attempt;
    attempt.onSuccess(c -> {
      c.exceptionHandler(e -> forget(attempt, c));
      c.endHandler(v -> forget(attempt, c));
    }).onFailure(e -> connectFailed());
    return attempt;
  }

  /**
   * A cluster client connects to every master of its slot map, and keeps that map for its cache TTL: after a
   * master died, every connect fails until the map is read again. A client that could not connect is
   * replaced (at most twice a second), so the next connect reads the map now and finds the new master.
   */
  private void connectFailed() {
    if (options.getType() != RedisClientType.CLUSTER) {
      return;
    }
    long now = ticker.nanos();
    if (now - lastReplaced >= 500_000_000L) {
      lastReplaced = now;
      replaceClient();
    }
  }

  private long lastReplaced;

  /**
   * A broken connection is closed, not only dropped: the pool would otherwise count it as lent forever. It
   * is closed once: its end and exception handlers may both fire, and a cluster connection's fire once for
   * each server it holds; a second close would give the same pooled connections back twice.
   */
  private void forget(Future<RedisConnection> broken, RedisConnection c) {
    if (connection == broken) {
      connection = null;
    }
    if (closed.add(c)) {
      c.close();
    }
  }

  /** Connections forget has closed (weakly held: a closed connection is soon garbage). */
  private final java.util.Set<RedisConnection> closed =
      java.util.Collections.newSetFromMap(new java.util.WeakHashMap<>());

  public Future<Void> close() {
    connection = null;
    return client.close();
  }
}
