package io.conveyor.crypto;

import io.conveyor.config.Config;
import io.conveyor.config.MasterKeySource;
import io.vertx.core.Future;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * Master keys held in memory: the current one (security.encryption.masterKey) and older ones kept only to unwrap
 * what they wrapped until it is re-wrapped (security.encryption.previousMasterKeys). Data keys are wrapped with
 * AES-256-GCM, bound to their owner and version. A master key's id is the first 8 bytes of its SHA-256: it names
 * the key without revealing it, and the same key always gets the same id.
 */
public final class LocalKeyProvider implements KeyProvider {
  /** A master key's length: AES-256. */
  public static final int KEY_BYTES = MasterKeySource.KEY_BYTES;
  private final String current;
  private final Map<String, SecretKey> byId;

  /** The current master key first, then older ones. */
  public LocalKeyProvider(List<byte[]> masterKeys) {
    Map<String, SecretKey> m = new LinkedHashMap<>();
    for (byte[] k : masterKeys) {
      if (k.length != KEY_BYTES) {
        throw new IllegalArgumentException("a master key has " + KEY_BYTES + " bytes, not " + k.length);
      }
      m.putIfAbsent(idOf(k), new SecretKeySpec(k, "AES"));
    }
    this.current = idOf(masterKeys.get(0));
    this.byId = Map.copyOf(m);
  }

  /**
   * The master keys the config names, read from where it says (MasterKeySource); a key that cannot be read or is
   * not 32 bytes fails with a ConfigException naming the setting.
   */
  public static LocalKeyProvider fromConfig(Config.Encryption c, Map<String, String> env) {
    List<byte[]> keys = new java.util.ArrayList<>();
    keys.add(MasterKeySource.resolve(Config.Encryption.MASTER_KEY, c.masterKey(), env));
    for (int i = 0; i < c.previousMasterKeys().size(); i++) {
      keys.add(MasterKeySource.resolve(Config.Encryption.PREVIOUS_MASTER_KEYS + "[" + i + "]", c.previousMasterKeys().get(i), env));
    }
    return new LocalKeyProvider(keys);
  }

  /** A master key's id: mk- and the first 8 bytes of its SHA-256 in hex. */
  public static String idOf(byte[] key) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(key);
      return "mk-" + HexFormat.of().formatHex(d, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public String currentId() {
    return current;
  }

  @Override
  public Future<Wrapped> wrap(byte[] dataKey, byte[] aad) {
    return Future.succeededFuture(new Wrapped(current, Sealer.encrypt(byId.get(current), aad, dataKey)));
  }

  @Override
  public Future<byte[]> unwrap(Wrapped wrapped, byte[] aad) {
    SecretKey master = byId.get(wrapped.masterId());
    if (master == null) {
      return Future.failedFuture(new SealedException("the data key was wrapped under master key "
          + wrapped.masterId() + ", which this node does not have (security.encryption.previousMasterKeys)"));
    }
    try {
      return Future.succeededFuture(Sealer.decrypt(master, aad, wrapped.bytes()));
    } catch (SealedException e) {
      return Future.failedFuture(e);
    }
  }
}
