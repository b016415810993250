package io.conveyor.redis;

import io.conveyor.config.Config;
import io.conveyor.crypto.Encryption;
import io.conveyor.time.Ticker;
import io.vertx.core.Vertx;
import io.vertx.redis.client.RedisOptions;
import java.time.Clock;
import java.time.Duration;

/**
 * One per node: where Redis is (options, and the timeout after which a command counts as unanswered), the
 * key names, the scripts, the clock and the ticker, the meter, the replicas a start or completion waits for,
 * the limits (Config.Limits) the scripts enforce, encryption at rest, the node's PartitionHealth, and how long its
 * batches of starts and completions linger for more (redis.linger, see Batcher). Each
 * verticle opens a StoreContext of its own (a link bound to its context) and builds on it the stores it uses; every
 * context shares the one health tracker.
 */
public record RedisAccess(RedisOptions options, Duration timeout, Keys keys, Scripts scripts, Clock clock,
                          Ticker ticker, ScriptMeter meter, Replicas replicas, Config.Limits limits,
                          Encryption encryption, PartitionHealth health, Duration linger) {

  /** A node's access, from its config (the stores' partition health its own, every context sharing it). */
  public static RedisAccess forNode(Config config, Clock clock, ScriptMeter meter) {
    Config.Redis r = config.redis();
    return new RedisAccess(RedisLink.options(r, config.security().redisTls()), r.timeout(),
        new Keys(r.prefix(), r.partitions()), new Scripts(), clock, Ticker.SYSTEM, meter,
        new Replicas(r.waitReplicas(), r.waitTimeout()), config.limits(),
        Encryption.fromConfig(config.security().encryption(), System.getenv(), Ticker.SYSTEM),
        new PartitionHealth(r.partitions(), r.partitionHealth(), Ticker.SYSTEM), r.linger());
  }

  /** No linger (a test's node parts). */
  public RedisAccess(RedisOptions options, Duration timeout, Keys keys, Scripts scripts, Clock clock,
                     Ticker ticker, ScriptMeter meter, Replicas replicas, Config.Limits limits,
                     Encryption encryption, PartitionHealth health) {
    this(options, timeout, keys, scripts, clock, ticker, meter, replicas, limits, encryption, health, Duration.ZERO);
  }

  public RedisAccess(RedisOptions options, Duration timeout, Keys keys, Scripts scripts, Clock clock,
                     Ticker ticker, ScriptMeter meter, Replicas replicas, Config.Limits limits,
                     Encryption encryption) {
    // no node, no probe (a command-line client, a tool): keep no outcome, as no probe would ever clear it; no linger
    this(options, timeout, keys, scripts, clock, ticker, meter, replicas, limits, encryption,
        PartitionHealth.ignoring(keys.partitions()));
  }

  public RedisAccess(RedisOptions options, Duration timeout, Keys keys, Scripts scripts, Clock clock,
                     Ticker ticker, ScriptMeter meter, Replicas replicas, Config.Limits limits) {
    this(options, timeout, keys, scripts, clock, ticker, meter, replicas, limits, Encryption.OFF);
  }

  public RedisAccess(RedisOptions options, Duration timeout, Keys keys, Scripts scripts, Clock clock,
                     ScriptMeter meter, Replicas replicas, Config.Limits limits) {
    this(options, timeout, keys, scripts, clock, Ticker.SYSTEM, meter, replicas, limits);
  }

  public RedisAccess(RedisOptions options, Duration timeout, Keys keys, Scripts scripts, Clock clock,
                     ScriptMeter meter, Replicas replicas) {
    this(options, timeout, keys, scripts, clock, meter, replicas, Config.Limits.DEFAULTS);
  }

  public RedisAccess(RedisOptions options, Duration timeout, Keys keys, Scripts scripts, Clock clock,
                     ScriptMeter meter) {
    this(options, timeout, keys, scripts, clock, meter, Replicas.NONE);
  }

  /** The same access with the scripts as loaded into Redis (their hashes known). */
  public RedisAccess withScripts(Scripts loaded) {
    return new RedisAccess(options, timeout, keys, loaded, clock, ticker, meter, replicas, limits, encryption, health,
        linger);
  }

  /** A context for one verticle (or one client thread): a link of its own. */
  public StoreContext open(Vertx vertx) {
    return new StoreContext(new RedisLink(vertx, options, timeout, ticker).meter(meter).linger(linger), keys, scripts,
        clock, replicas, limits, encryption, health);
  }
}
