package io.conveyor.crypto;

import io.conveyor.config.Config;
import io.vertx.core.Future;

/**
 * Seals and opens the payloads of the owners encryption is on for (security.encryption.owners): a payload
 * (input, output, metadata, an error's message, a step's output) is sealed under its owner's data key, bound to the
 * owner, the transaction and the field, and stored in place of its clear JSON. Other owners' payloads pass as they
 * are, and so does a value that is not sealed when opened. Use it on one verticle's context (DataKeys).
 */
public final class Payloads {
  private final Config.Encryption config;
  private final DataKeys keys;

  public Payloads(Config.Encryption config, DataKeys keys) {
    this.config = config;
    this.keys = keys;
  }

  /** Payloads that are never sealed (encryption off). */
  public static Payloads off() {
    return new Payloads(Config.Encryption.OFF, null);
  }

  /** Whether the owner's payloads are sealed. */
  public boolean sealsFor(String owner) {
    return config.sealsFor(owner);
  }

  /** The text to store for a payload: sealed for an owner with encryption on, else the clear JSON (null stays null). */
  public Future<String> seal(String owner, String txId, String field, String json) {
    if (json == null || !config.sealsFor(owner)) {
      return Future.succeededFuture(json);
    }
    return keys.forSealing(owner)
        .map(k -> Sealer.seal(k.key(), k.version(), Sealer.aad(owner, txId, field), json));
  }

  /**
   * The clear JSON of a stored payload: opened when sealed (whatever the setting says now: an owner may have had
   * encryption on before), else as it is. Fails with SealedException when it cannot be opened (its key shredded).
   */
  public Future<String> open(String owner, String txId, String field, String stored) {
    if (!Sealer.isSealed(stored)) {
      return Future.succeededFuture(stored);
    }
    if (keys == null) {
      return Future.failedFuture(new SealedException("a sealed value on a node without encryption set up "
          + "(security.encryption.masterKey)"));
    }
    int version;
    try {
      version = Sealer.keyVersion(stored);
    } catch (SealedException e) {
      return Future.failedFuture(e);
    }
    return keys.forOpening(owner, version).map(k -> Sealer.open(k.key(), Sealer.aad(owner, txId, field), stored));
  }
}
