package io.conveyor.config;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The security section: TLS on the HTTP listener (both files or neither), mutual TLS on the clustered bus (all three
 * or none), TLS on the TCP bridge (both or neither; neither takes the HTTP pair); TLS to Redis and PostgreSQL
 * (StoreTlsReader). The files themselves are read by the node that uses them (TlsPair.load, BusTrust.load, before
 * it starts anything), not here: the command line reads this config too, on machines and as users that need not
 * read the node's private key.
 */
final class SecurityReader {
  static final String CERT = "security.http.tls.certFile";
  static final String KEY = "security.http.tls.keyFile";
  static final String BUS = "security.bus.tls.";
  static final String BRIDGE = "security.bridge.tls.";

  private SecurityReader() {
  }

  static Config.Security read(ConfigReader r) {
    String cert = r.text(CERT, true);
    String key = r.text(KEY, true);
    Duration reload = r.duration("security.http.tls.reloadInterval", Duration.ofMillis(100));
    pair(r, CERT, cert, KEY, key, "HTTP");
    return new Config.Security(new Config.HttpTls(cert, key, reload), bus(r), bridge(r, cert, key),
        StoreTlsReader.redis(r), StoreTlsReader.archive(r));
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
    return new Config.BusTls(files[0], files[1], files[2]);
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
