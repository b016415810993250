package io.conveyor.crypto;

import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * Owners' data keys on one verticle's context: made at an owner's first seal (random, 256 bits), stored wrapped under
 * the master key (KeyRecords), unwrapped on the node and cached, at most cacheSize owners (least recently used
 * go first) and each for at most cacheTtl, so a shred this node missed the news of is seen within it. Use it from
 * its verticle's context only, like the StoreContext it reads through.
 */
public final class DataKeys {
  /** A clear data key and its version. */
  public record DataKey(int version, SecretKey key) {
  }

  private record Cached(DataKey key, long at) {
  }

  private static final SecureRandom RANDOM = new SecureRandom();
  /** How many times a make is tried again when a shred moves the version under it. */
  private static final int MAKE_TRIES = 3;
  private final KeyRecords store;
  private final KeyProvider provider;
  private final long ttlNanos;
  private final Ticker ticker;
  private final LinkedHashMap<String, Cached> cache;

  public DataKeys(KeyRecords store, KeyProvider provider, int cacheSize, Duration cacheTtl, Ticker ticker) {
    this.store = store;
    this.provider = provider;
    this.ttlNanos = cacheTtl.toNanos();
    this.ticker = ticker;
    this.cache = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Cached> eldest) {
        return size() > cacheSize;
      }
    };
  }

  /** The associated data a data key is wrapped with: its owner and version. */
  static byte[] aad(String owner, int version) {
    return ("conveyor:data-key:v1|" + owner.length() + ":" + owner + "|" + version).getBytes(StandardCharsets.UTF_8);
  }

  /** The key an owner's payloads are sealed with now; made and stored when the owner has none. */
  public Future<DataKey> forSealing(String owner) {
    DataKey hit = cached(owner);
    if (hit != null) {
      return Future.succeededFuture(hit);
    }
    return store.current(owner).compose(c -> c.key() != null ? unwrap(owner, c.key())
        : make(owner, c.lastVersion() + 1, MAKE_TRIES));
  }

  /**
   * The owner's key of a version, to open what it sealed; fails with SealedException when the owner has no key of
   * that version (shredded, or never made), or it does not unwrap.
   */
  public Future<DataKey> forOpening(String owner, int version) {
    DataKey hit = cached(owner);
    if (hit != null && hit.version() == version) {
      return Future.succeededFuture(hit);
    }
    return store.current(owner).compose(c -> {
      if (c.key() == null || c.key().version() != version) {
        cache.remove(owner);
        return Future.failedFuture(new SealedException("owner " + owner + " has no data key of version " + version
            + " (shredded, or never made): what it sealed stays sealed"));
      }
      return unwrap(owner, c.key());
    });
  }

  /** Drops an owner's cached key (its key was shredded or re-wrapped elsewhere). */
  public void forget(String owner) {
    cache.remove(owner);
  }

  private DataKey cached(String owner) {
    Cached c = cache.get(owner);
    if (c == null || ticker.nanos() - c.at() >= ttlNanos) {
      return null;
    }
    return c.key();
  }

  private Future<DataKey> unwrap(String owner, KeyRecords.Wrapped w) {
    return provider.unwrap(new KeyProvider.Wrapped(w.masterId(), Base64.getDecoder().decode(w.base64())),
        aad(owner, w.version())).map(bytes -> remember(owner, new DataKey(w.version(), new SecretKeySpec(bytes, "AES"))));
  }

  private Future<DataKey> make(String owner, int version, int tries) {
    byte[] clear = new byte[32];
    RANDOM.nextBytes(clear);
    return provider.wrap(clear, aad(owner, version))
        .compose(w -> store.put(owner, version, w.masterId(), Base64.getEncoder().encodeToString(w.bytes()))
            .compose(c -> {
              if (c.key() == null) {
                return tries > 1 ? make(owner, c.lastVersion() + 1, tries - 1)
                    : Future.failedFuture(new IllegalStateException("owner " + owner + "'s data key version kept "
                        + "moving while one was made (shredded " + MAKE_TRIES + " times meanwhile)"));
              }
              boolean ours = c.key().version() == version
                  && c.key().base64().equals(Base64.getEncoder().encodeToString(w.bytes()));
              return ours ? Future.succeededFuture(remember(owner, new DataKey(version, new SecretKeySpec(clear, "AES"))))
                  : unwrap(owner, c.key());
            }));
  }

  private DataKey remember(String owner, DataKey key) {
    cache.put(owner, new Cached(key, ticker.nanos()));
    return key;
  }
}
