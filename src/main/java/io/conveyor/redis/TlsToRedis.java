package io.conveyor.redis;

import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.config.MaskedUrl;
import io.conveyor.config.TrustFiles;
import io.vertx.core.net.NetClientOptions;
import io.vertx.redis.client.RedisOptions;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TLS to Redis (README, TLS to Redis and PostgreSQL): for rediss:// endpoints every connection (to the server, to
 * each master of a Redis Cluster, to the Sentinels and the masters they name, which keep the scheme) is TLS from
 * its first byte, and the server's certificate is verified, its name too unless turned off.
 */
public final class TlsToRedis {
  private static final Logger log = LoggerFactory.getLogger(TlsToRedis.class);

  private TlsToRedis() {
  }

  /**
   * Sets the client's TLS from the settings when the endpoints are rediss:// (else leaves it plain). Reads the CA
   * and client files (blocking: at start); a file that cannot be used is a ConfigException naming the setting.
   */
  static RedisOptions apply(RedisOptions options, Config.Redis redis, Config.RedisTls tls) {
    if (!secure(redis)) {
      return options;
    }
    // Vert.x 5 verifies no name unless told which algorithm: HTTPS is RFC 2818's (the SAN names the host). A plain
    // Redis never answers a ClientHello (it waits for a line end), so the handshake gives up well before a command
    // would, and the failure says TLS rather than "no answer"
    NetClientOptions net = options.getNetClientOptions().setSsl(true)
        .setHostnameVerificationAlgorithm(tls.verifyHostname() ? "HTTPS" : "")
        .setSslHandshakeTimeout(Math.max(100, redis.timeout().toMillis() / 2))
        .setSslHandshakeTimeoutUnit(java.util.concurrent.TimeUnit.MILLISECONDS);
    if (!tls.caFile().isEmpty()) {
      net.setTrustOptions(TrustFiles.ca(Config.RedisTls.CA_FILE, tls.caFile()));
    }
    if (tls.clientPair()) {
      net.setKeyCertOptions(TrustFiles.clientPair(Config.RedisTls.CERT_FILE, Config.RedisTls.KEY_FILE,
          tls.certFile(), tls.keyFile()));
    }
    if (!tls.verifyHostname()) {
      log.warn("{} is false: Redis's certificate is checked against the CA but not against the host name, so any "
          + "server with a certificate from that CA can pose as {}", Config.RedisTls.VERIFY_HOSTNAME,
          MaskedUrl.of(redis.url()));
    }
    return options;
  }

  static boolean secure(Config.Redis redis) {
    return redis.url().startsWith("rediss:");
  }

  /**
   * Why Redis could not be reached at start, for the one line a node prints: a failed TLS handshake names the
   * settings to look at (a ConfigException: exit 2), anything else says the server did not answer.
   */
  public static RuntimeException unreachable(Config.Redis redis, Throwable e) {
    Throwable explained = explain(redis, e);
    return explained instanceof ConfigException c ? c
        : new IllegalStateException("cannot reach Redis at " + MaskedUrl.of(redis.url()) + ": " + e.getMessage(), e);
  }

  /** A failed TLS handshake in e's causes as a ConfigException naming the settings; anything else unchanged. */
  public static Throwable explain(Config.Redis redis, Throwable e) {
    Throwable tls = tlsCause(e);
    if (tls == null) {
      return e;
    }
    String why = String.valueOf(deepest(tls).getMessage());
    String hint = tls.getClass().getSimpleName().equals("NotSslRecordException") || why.contains("not an SSL")
        || why.contains("timed out")
        ? "the server does not speak TLS on that port (use its TLS port, or redis:// for a plain one)"
        : secure(redis) ? "check " + Config.RedisTls.CA_FILE + " (the CA that signed the server's certificate; "
            + "empty: the JVM's trust store), that the certificate names the host in the URL ("
            + Config.RedisTls.VERIFY_HOSTNAME + "), and, if the server asks for one, the client pair ("
            + Config.RedisTls.CERT_FILE + ", " + Config.RedisTls.KEY_FILE + ")"
            : "the URL is redis:// (plain); use rediss:// for a server that speaks TLS";
    return new ConfigException("cannot reach Redis at " + MaskedUrl.of(redis.url()) + ": the TLS handshake failed ("
        + why.lines().findFirst().orElse(why) + "); " + hint);
  }

  /** The innermost cause: "Failed to create SSL connection" wraps what failed (an unknown CA, a name missing). */
  private static Throwable deepest(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t && t.getCause().getMessage() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** The SSL failure in e's causes (Netty wraps it in a DecoderException; the link in a RedisUnavailable). */
  private static Throwable tlsCause(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof SSLException || t.getClass().getSimpleName().equals("NotSslRecordException")) {
        return t;
      }
    }
    return null;
  }
}
