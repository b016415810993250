package io.conveyor.crypto;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;

/**
 * AES-256-GCM with the JDK's provider: a random 96-bit IV per seal, a 128-bit tag, and associated data that binds a
 * value to where it belongs, so a sealed value copied to another owner, transaction or field does not open. The
 * text form, stored in place of the clear JSON, is {@code sealed:v1:<keyVersion>:<base64 of IV, ciphertext, tag>};
 * JSON text never starts with "s", so a stored value is sealed exactly when it has the prefix. Stateless and safe
 * on any thread (a Cipher is made per call; SecureRandom is thread-safe).
 */
public final class Sealer {
  /** What every sealed value starts with. */
  public static final String PREFIX = "sealed:";
  private static final String V1 = PREFIX + "v1:";
  private static final int IV_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final SecureRandom RANDOM = new SecureRandom();

  private Sealer() {
  }

  /** Whether a stored value is sealed (else it is clear JSON, or null). */
  public static boolean isSealed(String stored) {
    return stored != null && stored.startsWith(PREFIX);
  }

  /**
   * The associated data of a payload: the owner (its length first, since an owner may hold any character), the
   * transaction and the field, e.g. "conveyor:v1|4:acme|tx-…|input".
   */
  public static byte[] aad(String owner, String txId, String field) {
    return ("conveyor:v1|" + owner.length() + ":" + owner + "|" + txId + "|" + field).getBytes(StandardCharsets.UTF_8);
  }

  /** Seals clear text under a data key of the given version, bound to aad. */
  public static String seal(SecretKey key, int keyVersion, byte[] aad, String clear) {
    byte[] sealed = encrypt(key, aad, clear.getBytes(StandardCharsets.UTF_8));
    return V1 + keyVersion + ":" + Base64.getEncoder().encodeToString(sealed);
  }

  /** The version of the data key a sealed value needs; fails on a value that is not in a known form. */
  public static int keyVersion(String sealed) {
    return parse(sealed).keyVersion;
  }

  /**
   * Opens a sealed value with the data key of its version; fails with SealedException when the text is not in a
   * known form, or the key, the associated data or a byte of the value is not the one it was sealed with.
   */
  public static String open(SecretKey key, byte[] aad, String sealed) {
    return new String(decrypt(key, aad, parse(sealed).bytes), StandardCharsets.UTF_8);
  }

  /** AES-GCM: IV, then ciphertext and tag. Also wraps data keys under a master key (LocalKeyProvider). */
  static byte[] encrypt(SecretKey key, byte[] aad, byte[] clear) {
    byte[] iv = new byte[IV_BYTES];
    RANDOM.nextBytes(iv);
    try {
      Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
      c.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, iv));
      c.updateAAD(aad);
      byte[] body = c.doFinal(clear);
      return ByteBuffer.allocate(iv.length + body.length).put(iv).put(body).array();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is not available: " + e.getMessage(), e);
    }
  }

  static byte[] decrypt(SecretKey key, byte[] aad, byte[] sealed) {
    if (sealed.length < IV_BYTES + TAG_BITS / 8) {
      throw new SealedException("a sealed value too short to hold an IV and a tag");
    }
    try {
      Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
      c.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, sealed, 0, IV_BYTES));
      c.updateAAD(aad);
      return c.doFinal(sealed, IV_BYTES, sealed.length - IV_BYTES);
    } catch (javax.crypto.AEADBadTagException e) {
      throw new SealedException("the sealed value does not open: another key, owner, transaction or field, "
          + "or altered");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is not available: " + e.getMessage(), e);
    }
  }

  private record Parsed(int keyVersion, byte[] bytes) {
  }

  private static Parsed parse(String sealed) {
    if (sealed == null || !sealed.startsWith(V1)) {
      throw new SealedException("not a sealed value of a known format (expected sealed:v1:<keyVersion>:<base64>)");
    }
    int colon = sealed.indexOf(':', V1.length());
    try {
      int version = Integer.parseInt(sealed.substring(V1.length(), colon));
      if (version < 1) {
        throw new NumberFormatException();
      }
      return new Parsed(version, Base64.getDecoder().decode(sealed.substring(colon + 1)));
    } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
      throw new SealedException("not a sealed value of a known format (expected sealed:v1:<keyVersion>:<base64>)");
    }
  }
}
