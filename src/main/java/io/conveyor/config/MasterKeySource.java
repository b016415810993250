package io.conveyor.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;

/**
 * Where a master key comes from (security.encryption.masterKey and previousMasterKeys): base64:<key> in the config
 * itself, file:<path> (the file holds the key in base64) or env:<VARIABLE> (the same). A refusal names the setting
 * and never shows the key.
 */
public final class MasterKeySource {
  /** A master key's length: AES-256. */
  public static final int KEY_BYTES = 32;
  private static final String FORMS = "base64:<key>, file:<path> or env:<VARIABLE>";

  private MasterKeySource() {
  }

  /**
   * Checks a source's form where the config is read: an inline key fully (base64, 32 bytes), a file's path and a
   * variable's name only, since the command line reads this config too, on machines that need not hold the key.
   */
  static void check(String setting, String source) {
    if (source.startsWith("base64:")) {
      decode(setting, source.substring("base64:".length()));
    } else if (source.startsWith("file:")) {
      try {
        Path.of(source.substring("file:".length()));
      } catch (InvalidPathException e) {
        throw bad(setting, "file: and a file path (" + e.getReason() + ")");
      }
    } else if (!source.matches("env:[A-Za-z_][A-Za-z0-9_]*")) {
      throw bad(setting, FORMS);
    }
  }

  /** The key a source names, read from its file or variable; fails naming the setting. */
  public static byte[] resolve(String setting, String source, Map<String, String> env) {
    check(setting, source);
    if (source.startsWith("base64:")) {
      return decode(setting, source.substring("base64:".length()));
    }
    if (source.startsWith("file:")) {
      String file = source.substring("file:".length());
      try {
        return decode(setting, Files.readString(Path.of(file), StandardCharsets.US_ASCII));
      } catch (IOException e) {
        throw bad(setting, "a readable file holding a base64 key (" + file + ": " + e.getMessage() + ")");
      }
    }
    String name = source.substring("env:".length());
    String value = env.get(name);
    if (value == null) {
      throw bad(setting, "an environment variable that is set (" + name + " is not)");
    }
    return decode(setting, value);
  }

  private static byte[] decode(String setting, String base64) {
    byte[] key;
    try {
      key = Base64.getDecoder().decode(base64.strip());
    } catch (IllegalArgumentException e) {
      throw bad(setting, "a key in base64 (" + e.getMessage() + ")");
    }
    if (key.length != KEY_BYTES) {
      throw bad(setting, "a " + KEY_BYTES + "-byte (256-bit) key in base64, e.g. from openssl rand -base64 32 (it has "
          + key.length + " bytes)");
    }
    return key;
  }

  private static ConfigException bad(String setting, String expected) {
    return new ConfigException("config key " + setting + " (env " + ConfigLoader.envName(setting.replaceAll(
        "\\[\\d+]$", "")) + "): expected " + expected + " (the key is not shown)");
  }
}
