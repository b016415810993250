package io.conveyor.config;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/**
 * security.redis.tls and security.archive.tls: TLS to the stores (README, TLS to Redis and PostgreSQL). Settings
 * that could not apply (a CA for a redis:// URL, an sslMode for an H2 archive) stop the node rather than leave it
 * believing it talks TLS. The files are read where the connections are made (RedisTls, PgTls), at start.
 */
final class StoreTlsReader {
  private static final String REDIS_CA = Config.RedisTls.CA_FILE;
  private static final String REDIS_CERT = Config.RedisTls.CERT_FILE;
  private static final String REDIS_KEY = Config.RedisTls.KEY_FILE;
  private static final String REDIS_VERIFY = Config.RedisTls.VERIFY_HOSTNAME;
  private static final String PG_MODE = Config.ArchiveTls.SSL_MODE;
  private static final String PG_CA = Config.ArchiveTls.CA_FILE;
  private static final String MODES = "auto, disable, allow, prefer, require, verify-ca or verify-full";

  private StoreTlsReader() {
  }

  static Config.RedisTls redis(ConfigReader r) {
    String ca = file(r, REDIS_CA);
    String cert = file(r, REDIS_CERT);
    String key = file(r, REDIS_KEY);
    if (cert.isEmpty() != key.isEmpty()) {
      throw r.bad(cert.isEmpty() ? REDIS_CERT : REDIS_KEY, "the path of a PEM file as well, since "
          + (cert.isEmpty() ? REDIS_KEY : REDIS_CERT) + " is set (a client pair for mutual TLS takes both files)");
    }
    Config.RedisTls tls = new Config.RedisTls(ca, cert, key, r.bool(REDIS_VERIFY));
    List<String> endpoints = r.redis().endpoints();
    boolean secure = endpoints.get(0).startsWith("rediss:");
    if (endpoints.stream().anyMatch(e -> e.startsWith("rediss:") != secure)) {
      throw r.bad("redis.endpoints", "URLs of one scheme: all rediss:// (TLS) or all redis://");
    }
    if (!secure && !tls.equals(Config.RedisTls.DEFAULTS)) {
      String at = !ca.isEmpty() ? REDIS_CA : !cert.isEmpty() ? REDIS_CERT : REDIS_VERIFY;
      throw r.bad(at, (at.equals(REDIS_VERIFY) ? "true" : "empty") + " while redis.url is redis:// (plain): these "
          + "settings apply to TLS, so use rediss://host:port to connect over TLS");
    }
    if (secure && "always".equals(r.raw("redis.embedded"))) {
      throw r.bad("redis.embedded", "auto or never with rediss:// (an embedded Redis serves no TLS)");
    }
    return tls;
  }

  static Config.ArchiveTls archive(ConfigReader r) {
    String given = r.text(PG_MODE, false).toLowerCase(Locale.ROOT);
    Config.PgSslMode keyMode = given.equals("auto") ? null : mode(given);
    if (!given.equals("auto") && keyMode == null) {
      throw r.bad(PG_MODE, MODES);
    }
    String ca = file(r, PG_CA);
    String url = r.text("archive.url", true);
    if (!url.startsWith("postgresql://") && !url.startsWith("postgres://")) {
      if (keyMode != null || !ca.isEmpty()) {
        throw r.bad(keyMode != null ? PG_MODE : PG_CA, (keyMode != null ? "auto" : "empty") + " unless archive.url "
            + "is postgresql://… (TLS is for a PostgreSQL archive; H2 is a local file)");
      }
      return Config.ArchiveTls.DISABLED;
    }
    Config.PgSslMode urlMode = urlMode(r, url);
    if (keyMode != null && urlMode != null && keyMode != urlMode) {
      throw new ConfigException("config keys " + PG_MODE + " (" + keyMode.value() + ") and archive.url's sslmode ("
          + urlMode.value() + ") disagree: set one of them");
    }
    Config.PgSslMode mode = keyMode != null ? keyMode : urlMode != null ? urlMode
        : ca.isEmpty() ? Config.PgSslMode.DISABLE : Config.PgSslMode.VERIFY_FULL;
    if (!ca.isEmpty() && !mode.verifies()) {
      throw r.bad(PG_CA, "empty with sslmode " + mode.value() + ", which checks no certificate; set " + PG_MODE
          + " to verify-full (or verify-ca) to check the server against this CA");
    }
    return new Config.ArchiveTls(mode, ca);
  }

  /** The URL's sslmode; its sslrootcert, sslcert or sslkey are refused (the Vert.x client would send them on). */
  private static Config.PgSslMode urlMode(ConfigReader r, String url) {
    int q = url.indexOf('?');
    Config.PgSslMode found = null;
    for (String part : q < 0 ? new String[0] : url.substring(q + 1).split("&")) {
      int eq = part.indexOf('=');
      String name = eq < 0 ? part : part.substring(0, eq);
      String value = eq < 0 ? "" : URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8);
      if (name.equals("sslrootcert") || name.equals("sslcert") || name.equals("sslkey")) {
        throw r.bad("archive.url", "no " + name + " parameter (the CA file is " + PG_CA + "; client certificates "
            + "for PostgreSQL are not supported)");
      }
      if (name.equals("sslmode")) {
        found = mode(value.toLowerCase(Locale.ROOT));
        if (found == null) {
          throw r.bad("archive.url", "an sslmode of disable, allow, prefer, require, verify-ca or verify-full");
        }
      }
    }
    return found;
  }

  private static Config.PgSslMode mode(String value) {
    for (Config.PgSslMode m : Config.PgSslMode.values()) {
      if (m.value().equals(value)) {
        return m;
      }
    }
    return null;
  }

  private static String file(ConfigReader r, String key) {
    String text = r.text(key, true);
    SecurityReader.path(r, key, text);
    return text;
  }
}
