package io.conveyor.crypto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** AES-GCM sealing: what is sealed opens only with its key, owner, transaction and field, and unaltered. */
class SealerTest {
  private static final String MARKER = "{\"card\":\"MARKER-4111\"}";

  private static SecretKey key() {
    byte[] k = new byte[32];
    new SecureRandom().nextBytes(k);
    return new SecretKeySpec(k, "AES");
  }

  @Test
  void a_sealed_payload_opens_to_its_clear_json_and_shows_none_of_it() {
    SecretKey k = key();
    String sealed = Sealer.seal(k, 3, Sealer.aad("acme", "tx-1", "input"), MARKER);
    assertTrue(sealed.startsWith("sealed:v1:3:"), sealed);
    assertTrue(Sealer.isSealed(sealed));
    assertFalse(sealed.contains("MARKER"));
    assertEquals(3, Sealer.keyVersion(sealed));
    assertEquals(MARKER, Sealer.open(k, Sealer.aad("acme", "tx-1", "input"), sealed));
  }

  @Test
  void the_same_payload_sealed_twice_differs_since_each_seal_takes_a_fresh_iv() {
    SecretKey k = key();
    byte[] aad = Sealer.aad("acme", "tx-1", "input");
    assertNotEquals(Sealer.seal(k, 1, aad, MARKER), Sealer.seal(k, 1, aad, MARKER));
  }

  @Test
  void a_sealed_value_moved_to_another_owner_transaction_or_field_does_not_open() {
    SecretKey k = key();
    String sealed = Sealer.seal(k, 1, Sealer.aad("acme", "tx-1", "input"), MARKER);
    for (byte[] other : List.of(Sealer.aad("globex", "tx-1", "input"), Sealer.aad("acme", "tx-2", "input"),
        Sealer.aad("acme", "tx-1", "output"), Sealer.aad("acme|tx-1", "", "input"))) {
      assertThrows(SealedException.class, () -> Sealer.open(k, other, sealed));
    }
    assertThrows(SealedException.class, () -> Sealer.open(key(), Sealer.aad("acme", "tx-1", "input"), sealed),
        "another key");
  }

  @Test
  void a_sealed_value_with_any_byte_altered_does_not_open() {
    SecretKey k = key();
    byte[] aad = Sealer.aad("acme", "tx-1", "input");
    String sealed = Sealer.seal(k, 1, aad, MARKER);
    String head = "sealed:v1:1:";
    byte[] bytes = Base64.getDecoder().decode(sealed.substring(head.length()));
    for (int i = 0; i < bytes.length; i++) {
      byte[] altered = bytes.clone();
      altered[i] ^= 1;
      String tampered = head + Base64.getEncoder().encodeToString(altered);
      assertThrows(SealedException.class, () -> Sealer.open(k, aad, tampered), "byte " + i);
    }
    String cut = head + Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(bytes, 20));
    assertThrows(SealedException.class, () -> Sealer.open(k, aad, cut));
  }

  @Test
  void a_value_in_no_known_format_is_refused_with_the_format_named() {
    for (String bad : List.of("sealed:v2:1:AAAA", "sealed:v1:x:AAAA", "sealed:v1:0:AAAA", "sealed:v1:1:***",
        "{\"a\":1}", "sealed:v1:")) {
      String m = assertThrows(SealedException.class, () -> Sealer.keyVersion(bad), bad).getMessage();
      assertTrue(m.contains("sealed:v1:<keyVersion>:<base64>"), m);
    }
    assertFalse(Sealer.isSealed("\"sealed:v1:1:AAAA\""), "a JSON string is clear JSON, never sealed");
    assertFalse(Sealer.isSealed(null));
  }
}
