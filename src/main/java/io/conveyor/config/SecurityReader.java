package io.conveyor.config;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The security section: TLS on the HTTP listener, both files or neither (TLS to Redis and PostgreSQL: StoreTlsReader).
 * The files themselves are read by the node that serves them (TlsPair.load, before it starts anything), not here:
 * the command line reads this config too, on machines and as users that need not read the node's private key.
 */
final class SecurityReader {
  static final String CERT = "security.http.tls.certFile";
  static final String KEY = "security.http.tls.keyFile";

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
    return new Config.Security(new Config.HttpTls(cert, key, reload), StoreTlsReader.redis(r),
        StoreTlsReader.archive(r));
  }

  static void path(ConfigReader r, String key, String text) {
    try {
      Path.of(text);
    } catch (InvalidPathException e) {
      throw r.bad(key, "a file path (" + e.getReason() + ")");
    }
  }
}
