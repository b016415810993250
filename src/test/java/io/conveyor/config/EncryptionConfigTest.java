package io.conveyor.config;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * security.encryption: off by default; owners named or "*"; a master key from the config, a file or a variable,
 * 32 bytes in base64; a refusal names the setting and never shows the key.
 */
class EncryptionConfigTest {
  private static final String OWNERS = "CONVEYOR_SECURITY_ENCRYPTION_OWNERS";
  private static final String MASTER = "CONVEYOR_SECURITY_ENCRYPTION_MASTER_KEY";
  private static final byte[] KEY = new byte[32];
  private static final String KEY64 = Base64.getEncoder().encodeToString(KEY);
  @TempDir
  Path dir;

  private static Config.Encryption load(String... envPairs) {
    Map<String, String> env = new HashMap<>();
    for (int i = 0; i < envPairs.length; i += 2) {
      env.put(envPairs[i], envPairs[i + 1]);
    }
    return ConfigLoader.load(null, env).security().encryption();
  }

  private static String refusal(String... envPairs) {
    return assertThrows(ConfigException.class, () -> load(envPairs)).getMessage();
  }

  @Test
  void encryption_is_off_by_default_and_seals_for_the_owners_named_or_for_all_with_a_star() {
    Config.Encryption off = load();
    assertFalse(off.enabled());
    assertFalse(off.sealsFor("acme"));
    Config.Encryption some = load(OWNERS, "acme,globex", MASTER, "base64:" + KEY64);
    assertTrue(some.sealsFor("acme") && some.sealsFor("globex") && !some.sealsFor("other"));
    assertTrue(load(OWNERS, "*", MASTER, "base64:" + KEY64).sealsFor("anyone"));
    assertEquals(1000, off.cacheSize());
  }

  @Test
  void owners_without_a_master_key_or_a_star_beside_names_stop_the_node_naming_the_setting() {
    String m = refusal(OWNERS, "acme");
    assertTrue(m.contains("security.encryption.masterKey") && m.contains(MASTER), m);
    m = refusal(OWNERS, "*,acme", MASTER, "base64:" + KEY64);
    assertTrue(m.contains("security.encryption.owners"), m);
  }

  @Test
  void an_inline_key_of_the_wrong_length_or_not_base64_is_refused_without_showing_it() {
    String short64 = Base64.getEncoder().encodeToString(new byte[16]);
    String m = refusal(OWNERS, "acme", MASTER, "base64:" + short64);
    assertTrue(m.contains("security.encryption.masterKey") && m.contains("has 16 bytes"), m);
    assertFalse(m.contains(short64), "the key is never shown: " + m);
    m = refusal(OWNERS, "acme", MASTER, "base64:not*base64");
    assertTrue(m.contains("a key in base64") && !m.contains("not*base64"), m);
    m = refusal(OWNERS, "acme", MASTER, "plain-text-key");
    assertTrue(m.contains("base64:<key>, file:<path> or env:<VARIABLE>") && !m.contains("plain-text-key"), m);
  }

  @Test
  void a_key_in_a_file_or_a_variable_is_read_and_checked_where_the_node_starts() throws IOException {
    Path file = Files.writeString(dir.resolve("master.key"), KEY64 + "\n");
    assertArrayEquals(KEY, MasterKeySource.resolve("k", "file:" + file, Map.of()));
    assertArrayEquals(KEY, MasterKeySource.resolve("k", "env:MY_MASTER", Map.of("MY_MASTER", KEY64)));
    String m = assertThrows(ConfigException.class, () -> MasterKeySource.resolve(Config.Encryption.MASTER_KEY,
        "env:MY_MASTER", Map.of())).getMessage();
    assertTrue(m.contains("security.encryption.masterKey") && m.contains("MY_MASTER is not"), m);
    m = assertThrows(ConfigException.class, () -> MasterKeySource.resolve(Config.Encryption.MASTER_KEY,
        "file:" + dir.resolve("absent.key"), Map.of())).getMessage();
    assertTrue(m.contains("a readable file") && m.contains("absent.key"), m);
    Files.writeString(file, Base64.getEncoder().encodeToString(new byte[31]));
    m = assertThrows(ConfigException.class, () -> MasterKeySource.resolve(Config.Encryption.MASTER_KEY,
        "file:" + file, Map.of())).getMessage();
    assertTrue(m.contains("has 31 bytes"), m);
  }

  @Test
  void a_previous_master_key_is_checked_and_named_by_its_place_in_the_list() {
    Config.Encryption ok = load(OWNERS, "acme", MASTER, "base64:" + KEY64,
        "CONVEYOR_SECURITY_ENCRYPTION_PREVIOUS_MASTER_KEYS", "env:OLD_KEY");
    assertEquals(List.of("env:OLD_KEY"), ok.previousMasterKeys());
    String m = refusal(OWNERS, "acme", MASTER, "base64:" + KEY64,
        "CONVEYOR_SECURITY_ENCRYPTION_PREVIOUS_MASTER_KEYS", "env:OLD_KEY,base64:AAAA");
    assertTrue(m.contains("security.encryption.previousMasterKeys[1]")
        && m.contains("CONVEYOR_SECURITY_ENCRYPTION_PREVIOUS_MASTER_KEYS"), m);
  }
}
