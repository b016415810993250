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
 * next command. On a Redis Cluster, one such connection per master, each command sent to its slot's master
 * (SlotRouter), so one master's trouble fails only its slots' commands. Use it from its owner's context only;
 * blocking commands and SUBSCRIBE need their own.
 */
public final class RedisLink {
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
  /** How often a cluster link reads the slot map again while a master failed in the last minute (SlotRouter). */
  static final long SLOT_CACHE_MS = 5_000;
  private final Vertx vertx;
  private final RedisOptions options;
  private final long timeoutMs;
  private final Ticker ticker;
  /** The standalone client; null on a Redis Cluster, where the router holds one per master. */
  private Redis client;
  private final SlotRouter router;
  private Future<RedisConnection> connection;
  private ScriptMeter meter = ScriptMeter.NONE;
  private Duration linger = Duration.ZERO;
  private StatsTally stats;

  /** Script round trips on this link are timed into this meter. */
  public RedisLink meter(ScriptMeter m) {
    this.meter = m;
    return this;
  }

  public ScriptMeter meter() {
    return meter;
  }

  /** How long a batch of starts or completions made on this link waits for more (redis.linger; see Batcher). */
  public RedisLink linger(Duration l) {
    this.linger = l;
    return this;
  }

  public Duration linger() {
    return linger;
  }

  /** Elapsed time for the meter's round trips (and a cluster link's slot map re-reads). */
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
    boolean cluster = options.getType() == RedisClientType.CLUSTER;
    this.router = cluster ? new SlotRouter(vertx, options, timeout, ticker) : null;
    this.client = cluster ? null : Redis.createClient(vertx, options);
    this.timeoutMs = timeout.toMillis();
    this.ticker = ticker;
  }

  /** Options for a standalone Redis at url. */
  public static RedisOptions options(String url, int maxPipelined) {
    return new RedisOptions().setConnectionString(url).setMaxWaitingHandlers(maxPipelined)
        .setMaxPoolSize(4).setMaxPoolWaiting(maxPipelined);
  }

  /**
   * Options for a node's links, from the redis section of config. A Redis Cluster link routes each
   * command by its keys' slot, follows MOVED and ASK, and refreshes its slot map (SlotRouter); a Sentinel client asks
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
      // the type and seeds make RedisLink route by itself (SlotRouter); the TTLs serve a library cluster client
      // made from these options (the tests' own): 1 s (the default) would cost 6 CLUSTER SLOTS a second
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
    return (router != null ? router.send(request) : sendRaw(request))
        .recover(e -> Future.failedFuture(RedisUnavailable.classify(e)));
  }

  /** The same with Redis's and the client's failures as they came (a MOVED is the router's to follow). */
  Future<Response> sendRaw(Request request) {
    Future<RedisConnection> used = connection();
    return used.compose(c -> c.send(request)).timeout(timeoutMs, TimeUnit.MILLISECONDS)
        .onFailure(e -> dropIfBroken(used, e));
  }

  /**
   * Sends the requests together on one connection (in a Redis Cluster: to the master of their keys' slot,
   * so a keyless command such as WAIT goes where the script before it ran); fails as send does.
   */
  public Future<List<Response>> batch(List<Request> requests) {
    return (router != null ? router.batch(requests) : batchRaw(requests))
        .recover(e -> Future.failedFuture(RedisUnavailable.classifyBatch(e)));
  }

  Future<List<Response>> batchRaw(List<Request> requests) {
    Future<RedisConnection> used = connection();
    return used.compose(c -> c.batch(requests)).timeout(timeoutMs, TimeUnit.MILLISECONDS)
        .onFailure(e -> dropIfBroken(used, e));
  }

  /**
   * Whether the Redis that holds the key failed more recently than it answered: on a Redis Cluster, its slot's
   * master (see SlotRouter); elsewhere, never said (false). For per-partition health.
   */
  public boolean failing(String key) {
    return router != null && router.failing(SlotMap.slotOf(key));
  }

  /** On a Redis Cluster, each master's answer to a keyless request by host:port (those that answered); else none. */
  public Future<java.util.Map<String, Response>> eachMaster(Request request) {
    return router == null ? Future.succeededFuture(java.util.Map.of()) : router.eachMaster(request);
  }

  /** On a Redis Cluster, the master (host:port) that holds the key's slot as this link last read the map; else null. */
  public String master(String key) {
    return router == null ? null : router.owner(SlotMap.slotOf(key));
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
   * This (standalone) link's server serves no slot any more, by a Redis Cluster's map: a paused master whose
   * replica took over. Its client is replaced, so what it left unanswered fails now, outcome unknown as at a
   * timeout, instead of at redis.timeout.
   */
  void abandon() {
    replaceClient();
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

  /**
   * A connection of its own, for a blocking command or a subscription; on a Redis Cluster, to a master that
   * answers, with more opened for commands that name other masters' slots (RoutedConnection).
   */
  public Future<RedisConnection> dedicated() {
    return router != null ? router.dedicated() : client.connect();
  }

  /**
   * Where a subscription to the key's (shard) channel goes: on a Redis Cluster its slot's master (the slot map read
   * first if need be), elsewhere "" (the one Redis). See Subscriptions.
   */
  Future<String> masterOf(String key) {
    return router == null ? Future.succeededFuture("") : router.master(SlotMap.slotOf(key));
  }

  /** How long a command may go unanswered (the subscriptions' bound too). */
  long timeoutMs() {
    return timeoutMs;
  }

  /** A connection of its own to a master named by masterOf. */
  Future<RedisConnection> dedicated(String master) {
    return router == null ? client.connect() : router.connect(master);
  }

  /** A connection to a master named by masterOf has gone silent: on a Redis Cluster the slot map is re-read. */
  void silent(String master) {
    if (router != null) {
      router.silent(master);
    }
  }

  /** A command on a master named by masterOf failed: a MOVED is noted, so the next try goes to the new master. */
  void refusedOn(String master, Throwable e) {
    if (router != null) {
      router.refused(master, e);
    }
  }

  /**
   * The shared connection, or a new attempt (the attempt is returned, not the field, which a failure may clear).
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
    });
    return attempt;
  }

  /**
   * A broken connection is closed, not only dropped: the pool would otherwise count it as lent forever. It
   * is closed once: its end and exception handlers may both fire; a second close would give the same pooled
   * connection back twice.
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

  /** The stats counts of this link's start and complete calls, written once a second (StatsTally). */
  StatsTally stats() {
    if (stats == null) {
      stats = new StatsTally(vertx, this);
    }
    return stats;
  }

  /** Writes the stats counts held (StatsTally), then closes. */
  public Future<Void> close() {
    Future<Void> written = stats == null ? Future.succeededFuture() : stats.close();
    return written.transform(v -> {
      connection = null;
      return router != null ? router.close() : client.close();
    });
  }
}
