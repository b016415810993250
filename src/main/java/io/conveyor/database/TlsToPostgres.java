package io.conveyor.database;

import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.config.TrustFiles;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.TrustOptions;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;
import org.postgresql.ds.PGSimpleDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TLS to a PostgreSQL archive (README, TLS to Redis and PostgreSQL): one sslmode, libpq's meaning, mapped onto both
 * clients the archive uses: the Vert.x pool and the JDBC connection Flyway migrates over. verify-ca and verify-full
 * check the server's certificate against caFile (else the JVM's trust store), verify-full its host name too;
 * allow, prefer and require encrypt but check nothing, as in libpq, and say so in the log.
 */
final class TlsToPostgres {
  private static final Logger log = LoggerFactory.getLogger(TlsToPostgres.class);

  private TlsToPostgres() {
  }

  /** Sets the pool's TLS; reads the CA file (blocking: on a worker thread, at open). */
  static void apply(PgConnectOptions connect, Config.ArchiveTls tls) {
    connect.setSslMode(SslMode.of(tls.sslMode().value()));
    if (tls.sslMode() == Config.PgSslMode.DISABLE) {
      return;
    }
    ClientSSLOptions ssl = new ClientSSLOptions();
    if (tls.sslMode().verifies()) {
      ssl.setTrustOptions(tls.caFile().isEmpty() ? jvmTrust() : TrustFiles.ca(Config.ArchiveTls.CA_FILE,
          tls.caFile()));
      ssl.setHostnameVerificationAlgorithm(tls.sslMode() == Config.PgSslMode.VERIFY_FULL ? "HTTPS" : "");
    } else {
      ssl.setTrustAll(true).setHostnameVerificationAlgorithm("");
      log.warn("the archive's TLS (sslmode {}) checks no certificate: whoever sits between this node and {}:{} can "
          + "pose as the server; set {} to verify-full (with {} for a private CA)", tls.sslMode().value(),
          connect.getHost(), connect.getPort(), Config.ArchiveTls.SSL_MODE, Config.ArchiveTls.CA_FILE);
    }
    connect.setSslOptions(ssl);
  }

  /** The same for JDBC: pgjdbc reads the CA file itself, and takes the JVM's trust store from its Java factory. */
  static void apply(PGSimpleDataSource jdbc, Config.ArchiveTls tls) {
    jdbc.setSslMode(tls.sslMode().value());
    if (tls.sslMode().verifies()) {
      if (tls.caFile().isEmpty()) {
        jdbc.setSslfactory("org.postgresql.ssl.DefaultJavaSSLFactory");
      } else {
        jdbc.setSslRootCert(tls.caFile());
      }
    }
  }

  /**
   * A failure to open, for the one line a node prints: a failed TLS handshake names the settings to look at (a
   * ConfigException: exit 2); anything else passes unchanged.
   */
  static Throwable explain(Throwable e, Config.ArchiveTls tls) {
    if (e instanceof ConfigException || !tlsFailure(e)) {
      return e;
    }
    return new ConfigException("the TLS handshake with PostgreSQL failed (" + firstLine(e) + "); check "
        + Config.ArchiveTls.CA_FILE + " (the CA that signed the server's certificate; "
        + (tls.caFile().isEmpty() ? "empty: the JVM's trust store" : "now " + tls.caFile()) + ") and, with sslmode "
        + "verify-full (now " + tls.sslMode().value() + ", " + Config.ArchiveTls.SSL_MODE
        + "), that the certificate names the host in archive.url");
  }

  private static boolean tlsFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String m = String.valueOf(t.getMessage());
      if (t instanceof SSLException || m.contains("SSL error") || m.contains("PKIX path")
          || m.contains("hostname") && m.contains("verif")) {
        return true;
      }
    }
    return false;
  }

  private static String firstLine(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = String.valueOf(root.getMessage());
    return m.lines().findFirst().orElse(m);
  }

  private static TrustOptions jvmTrust() {
    try {
      TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      f.init((KeyStore) null);
      return TrustOptions.wrap(f);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JVM's trust store cannot be read: " + e.getMessage(), e);
    }
  }
}
