package io.conveyor.config;

import io.vertx.core.json.JsonArray;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The security section: TLS on the HTTP listener (both files or neither), mutual TLS on the clustered bus (all three
 * or none), TLS on the TCP bridge (both or neither; neither takes the HTTP pair); TLS to Redis and PostgreSQL
 * (StoreTlsReader); encryption at rest. The files themselves are read by the node that uses them (TlsPair.load, BusTrust.load, before
 * it starts anything), not here: the command line reads this config too, on machines and as users that need not
 * read the node's private key.
 */
final class SecurityReader {
  static final String CERT = "security.http.tls.certFile";
  static final String KEY = "security.http.tls.keyFile";
  static final String BUS = "security.bus.tls.";
  static final String BRIDGE = "security.bridge.tls.";
  static final String OWNERS = "security.encryption.owners";

  private SecurityReader() {
  }

  static Config.Security read(ConfigReader r) {
    String cert = r.text(CERT, true);
    String key = r.text(KEY, true);
    Duration reload = r.duration("security.http.tls.reloadInterval", Duration.ofMillis(100));
    pair(r, CERT, cert, KEY, key, "HTTP");
    return new Config.Security(new Config.HttpTls(cert, key, reload), bus(r), bridge(r, cert, key),
        StoreTlsReader.redis(r), StoreTlsReader.archive(r), encryption(r));
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

  private static Config.BusTls bus(ConfigReader r) {
    String[] names = {BUS + "certFile", BUS + "keyFile", BUS + "caFile"};
    String[] files = new String[3];
    for (int i = 0; i < 3; i++) {
      files[i] = r.text(names[i], true);
      path(r, names[i], files[i]);
    }
    boolean any = !String.join("", files).isEmpty();
    for (int i = 0; i < 3; i++) {
      if (any && files[i].isEmpty()) {
        throw r.bad(names[i], "the path of a PEM file as well: mutual TLS on the event bus takes "
            + BUS + "certFile, keyFile and caFile (the node's pair and the cluster CA); none leaves the bus plain");
      }
    }
    return new Config.BusTls(files[0], files[1], files[2], r.regex(BUS + "nodeSubject"));
  }

  /** The bridge's own pair, else the HTTP listener's (one certificate for the names clients call a node by). */
  private static Config.BridgeTls bridge(ConfigReader r, String httpCert, String httpKey) {
    String cert = r.text(BRIDGE + "certFile", true);
    String key = r.text(BRIDGE + "keyFile", true);
    pair(r, BRIDGE + "certFile", cert, BRIDGE + "keyFile", key, "the TCP bridge");
    return cert.isEmpty() ? new Config.BridgeTls(httpCert, httpKey, "security.http.tls")
        : new Config.BridgeTls(cert, key, "security.bridge.tls");
  }

  private static void pair(ConfigReader r, String certKey, String cert, String keyKey, String key, String what) {
    if (cert.isEmpty() != key.isEmpty()) {
      throw r.bad(cert.isEmpty() ? certKey : keyKey, "the path of a PEM file as well, since "
          + (cert.isEmpty() ? keyKey : certKey) + " is set (TLS takes both files; neither leaves " + what + " plain)");
    }
    path(r, certKey, cert);
    path(r, keyKey, key);
  }

  static void path(ConfigReader r, String key, String text) {
    try {
      Path.of(text);
    } catch (InvalidPathException e) {
      throw r.bad(key, "a file path (" + e.getReason() + ")");
    }
  }
}
