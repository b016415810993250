package io.conveyor.crypto;

import io.conveyor.config.Config;
import io.conveyor.time.Ticker;
import java.util.Map;

/**
 * A node's encryption at rest, set up once (the settings and the master keys) and shared by its verticles; each
 * store makes its Payloads from it on its own context, reading data keys through that context.
 */
public record Encryption(Config.Encryption config, KeyProvider provider, Ticker ticker) {
  /**
   * Published (cluster-wide) when an owner's data key is shredded, body the owner: every context that caches data
   * keys drops that owner's (bus.Addresses.DATA_KEY_SHREDDED).
   */
  public static final String SHREDDED = "conveyor.data-key.shredded";

  /** No master key: nothing is sealed, and a sealed value met is left as it is. */
  public static final Encryption OFF = new Encryption(Config.Encryption.OFF, null, Ticker.SYSTEM);

  /** From the settings: the master keys read from where they say (a ConfigException names a bad one). */
  public static Encryption fromConfig(Config.Encryption c, Map<String, String> env, Ticker ticker) {
    return c.masterKey().isEmpty() ? OFF : new Encryption(c, LocalKeyProvider.fromConfig(c, env), ticker);
  }

  /**
   * Payloads whose data keys are read and made through records. On a Vert.x context the stores of one scope (one
   * Redis link) share one cache of data keys there, which drops an owner's key when told it was shredded (a
   * consumer of SHREDDED on that context, so the cache is touched on its context only); elsewhere (a test's thread)
   * a cache of its own, bounded in time by cacheTtl alone.
   */
  public Payloads payloads(KeyRecords records) {
    if (provider == null) {
      return Payloads.off();
    }
    io.vertx.core.Context ctx = io.vertx.core.Vertx.currentContext();
    if (ctx == null) {
      return new Payloads(config, keys(records));
    }
    java.util.List<Object> key = java.util.List.of(this, records.scope());
    DataKeys shared = ctx.get(key);
    if (shared == null) {
      DataKeys made = keys(records);
      ctx.put(key, made);
      ctx.owner().eventBus().<String>consumer(SHREDDED, m -> made.forget(m.body()));
      shared = made;
    }
    return new Payloads(config, shared);
  }

  private DataKeys keys(KeyRecords records) {
    return new DataKeys(records, provider, config.cacheSize(), config.cacheTtl(), ticker);
  }
}
