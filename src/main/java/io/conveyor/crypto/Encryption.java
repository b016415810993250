package io.conveyor.crypto;

import io.conveyor.config.Config;
import io.conveyor.time.Ticker;
import java.util.Map;

/**
 * A node's encryption at rest, set up once (the settings and the master keys) and shared by its verticles; each
 * store makes its Payloads from it on its own context, reading data keys through that context.
 */
public record Encryption(Config.Encryption config, KeyProvider provider, Ticker ticker) {
  /** No master key: nothing is sealed, and a sealed value met is left as it is. */
  public static final Encryption OFF = new Encryption(Config.Encryption.OFF, null, Ticker.SYSTEM);

  /** From the settings: the master keys read from where they say (a ConfigException names a bad one). */
  public static Encryption fromConfig(Config.Encryption c, Map<String, String> env, Ticker ticker) {
    return c.masterKey().isEmpty() ? OFF : new Encryption(c, LocalKeyProvider.fromConfig(c, env), ticker);
  }

  /** Payloads for one context, whose data keys are read and made through records. */
  public Payloads payloads(KeyRecords records) {
    return provider == null ? Payloads.off()
        : new Payloads(config, new DataKeys(records, provider, config.cacheSize(), config.cacheTtl(), ticker));
  }
}
