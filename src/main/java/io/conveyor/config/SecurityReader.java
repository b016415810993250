package io.conveyor.config;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The security section: TLS on the HTTP listener. Both files or neither; when given, they are read and checked
 * here (PEM, the key the certificate's), so a node with a pair it cannot serve refuses to start, naming the file.
 */
final class SecurityReader {
  private static final String CERT = "security.http.tls.certFile";
  private static final String KEY = "security.http.tls.keyFile";

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
    if (!cert.isEmpty()) {
      Path certFile = path(r, CERT, cert);
      Path keyFile = path(r, KEY, key);
      try {
        TlsPair.read(certFile, keyFile);
      } catch (TlsPair.BadPair e) {
        String at = e.file().equals(certFile) ? CERT : KEY;
        throw new ConfigException("config key " + at + " (env " + ConfigLoader.envName(at) + "): " + e.getMessage());
      }
    }
    return new Config.Security(new Config.HttpTls(cert, key, reload));
  }

  private static Path path(ConfigReader r, String key, String text) {
    try {
      return Path.of(text);
    } catch (InvalidPathException e) {
      throw r.bad(key, "a file path (" + e.getReason() + ")");
    }
  }
}
