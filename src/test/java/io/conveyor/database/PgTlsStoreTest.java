package io.conveyor.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.testing.PgTlsServer;
import io.conveyor.testing.TestCerts;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The PostgreSQL archive over TLS (README, TLS to Redis and PostgreSQL), against a PostgreSQL of the test's own that
 * takes TLS connections only, with a certificate of a test CA for localhost and 127.0.0.1. Both clients the archive
 * uses go over it: JDBC (Flyway's migration) and the Vert.x pool (a write and a read).
 */
class PgTlsStoreTest {
  private static final Duration REFUSAL = Duration.ofSeconds(20);
  @TempDir
  static Path dir;
  private static TestCerts certs;
  private static PgTlsServer server;
  private final Vertx vertx = Vertx.vertx();

  @BeforeAll
  static void startServer() throws Exception {
    Assumptions.assumeTrue(PgTlsServer.available(), "no /usr/lib/postgresql/15/bin/initdb and pg_ctl: TLS to "
        + "PostgreSQL is not tested here");
    certs = new TestCerts(Files.createDirectories(dir.resolve("ca")));
    server = PgTlsServer.start(certs);
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @AfterEach
  void closeVertx() {
    vertx.close().await();
  }

  private ArchiveStore store(String host, Config.ArchiveTls tls) {
    return new PgArchiveStore(vertx, server.url(host, ""), "tls_archive", tls);
  }

  @Test
  void the_archive_with_verify_full_and_the_ca_writes_and_reads_a_transaction_over_tls() {
    ArchiveStore store = store("127.0.0.1", new Config.ArchiveTls(Config.PgSslMode.VERIFY_FULL,
        certs.ca().toString()));
    store.open().await();
    try {
      ArchivedTx t = ArchiveStoreContract.tx("acme", "order-1", 1_800_000_000_123L, "success",
          new JsonObject().put("done", true));
      store.write(List.of(t)).await();
      assertEquals(t.state(), store.find(t.txId()).await().state());
    } finally {
      store.close().await();
    }
  }

  @Test
  void a_ca_that_did_not_sign_the_servers_certificate_stops_the_open_naming_the_ca_setting() throws Exception {
    TestCerts other = new TestCerts(Files.createDirectories(dir.resolve("other")));
    ArchiveStore store = store("127.0.0.1", new Config.ArchiveTls(Config.PgSslMode.VERIFY_FULL,
        other.ca().toString()));
    Throwable e = assertTimeoutPreemptively(REFUSAL, () -> assertThrows(Throwable.class, () -> store.open().await()));
    assertInstanceOf(ConfigException.class, e, e.toString());
    assertTrue(e.getMessage().contains("TLS handshake with PostgreSQL failed")
        && e.getMessage().contains("security.archive.tls.caFile"), e.getMessage());
    store.close().await();
  }

  @Test
  void verify_full_refuses_a_host_the_certificate_does_not_name_and_verify_ca_takes_it() {
    String ca = certs.ca().toString();
    ArchiveStore full = store("127.0.0.2", new Config.ArchiveTls(Config.PgSslMode.VERIFY_FULL, ca));
    Throwable e = assertTimeoutPreemptively(REFUSAL, () -> assertThrows(Throwable.class, () -> full.open().await()));
    assertInstanceOf(ConfigException.class, e, e.toString());
    full.close().await();

    ArchiveStore chainOnly = store("127.0.0.2", new Config.ArchiveTls(Config.PgSslMode.VERIFY_CA, ca));
    chainOnly.open().await();
    chainOnly.close().await();
  }

  @Test
  void require_encrypts_without_checking_the_certificate_as_libpq_does() {
    ArchiveStore store = store("127.0.0.2", new Config.ArchiveTls(Config.PgSslMode.REQUIRE, ""));
    store.open().await();
    store.close().await();
  }

  @Test
  void disable_is_refused_by_a_server_that_takes_tls_only() {
    ArchiveStore store = store("127.0.0.1", Config.ArchiveTls.DISABLED);
    Throwable e = assertTimeoutPreemptively(REFUSAL, () -> assertThrows(Throwable.class, () -> store.open().await()));
    assertTrue(String.valueOf(e.getMessage()).contains("no encryption") || String.valueOf(e.getMessage())
        .contains("pg_hba.conf"), e.toString());
    store.close().await();
  }
}
