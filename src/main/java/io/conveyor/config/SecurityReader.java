package io.conveyor.config;

import io.vertx.core.json.JsonArray;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The security section: TLS on the HTTP listener, both files or neither; encryption at rest. The files themselves are read by the node
 * that serves them (TlsPair.load, before it starts anything), not here: the command line reads this config too,
 * on machines and as users that need not read the node's private key.
 */
final class SecurityReader {
  static final String CERT = "security.http.tls.certFile";
  static final String KEY = "security.http.tls.keyFile";
  static final String OWNERS = "security.encryption.owners";

  private SecurityReader() {
  }

  static Config.Security read(ConfigReader r) {
    String cert = r.text(CERT, true);
    String key = r.text(KEY, true);
    Duration reload = r.duration("security.http.tls.reloadInterval", Duration.ofMillis(100));
    if (cert.isEmpty() != key.isEmpty()) {
      throw r.bad(cert.isEmpty() ? CERT : KEY, "the path of a PEM file as well, since "
          + (cert.isEmpty() ? KEY : CERT) + " is set (TLS takes both files; neither leaves HTTP plain)");
    }
    path(r, CERT, cert);
    path(r, KEY, key);
    return new Config.Security(new Config.HttpTls(cert, key, reload), encryption(r));
  }

  /**
   * Encryption at rest: owners (names, or "*" alone for all), a master key source when any owner is named, older
   * sources for rotation. Sources are checked for form here (MasterKeySource.check); the node reads the keys.
   */
  static Config.Encryption encryption(ConfigReader r) {
    List<String> owners = list(r, OWNERS, "a list of owner names, or [\"*\"] for every owner");
    if (owners.contains("*") && owners.size() > 1) {
      throw r.bad(OWNERS, "[\"*\"] alone (every owner) or a list of owner names, not both");
    }
    String master = r.text(Config.Encryption.MASTER_KEY, true);
    if (!owners.isEmpty() && master.isEmpty()) {
      throw new ConfigException("config key " + Config.Encryption.MASTER_KEY + " (env "
          + ConfigLoader.envName(Config.Encryption.MASTER_KEY) + "): expected base64:<key>, file:<path> or "
          + "env:<VARIABLE>, since " + OWNERS + " names owners to seal for");
    }
    if (!master.isEmpty()) {
      MasterKeySource.check(Config.Encryption.MASTER_KEY, master);
    }
    List<String> previous = list(r, Config.Encryption.PREVIOUS_MASTER_KEYS, "a list of master key sources");
    for (int i = 0; i < previous.size(); i++) {
      MasterKeySource.check(Config.Encryption.PREVIOUS_MASTER_KEYS + "[" + i + "]", previous.get(i));
    }
    return new Config.Encryption(owners, master, previous, r.integer("security.encryption.cacheSize", 1, 10_000_000),
        r.duration("security.encryption.cacheTtl", Duration.ofSeconds(1)),
        list(r, "security.encryption.searchableMetadata", "a list of metadata field names kept in clear for search"));
  }

  /** A list of non-blank strings (an empty one is fine); the message names the setting, never its values. */
  private static List<String> list(ConfigReader r, String path, String expected) {
    if (!(r.raw(path) instanceof JsonArray a)) {
      throw new ConfigException("config key " + path + " (env " + ConfigLoader.envName(path) + "): expected "
          + expected);
    }
    List<String> out = new ArrayList<>();
    for (Object o : a) {
      if (!(o instanceof String s) || s.isBlank()) {
        throw new ConfigException("config key " + path + " (env " + ConfigLoader.envName(path) + "): expected "
            + expected + " (an entry is blank or not a string)");
      }
      out.add(s.strip());
    }
    return List.copyOf(out);
  }

  private static void path(ConfigReader r, String key, String text) {
    try {
      Path.of(text);
    } catch (InvalidPathException e) {
      throw r.bad(key, "a file path (" + e.getReason() + ")");
    }
  }
}
