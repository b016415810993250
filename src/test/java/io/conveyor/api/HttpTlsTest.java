package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestCerts;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.net.PemTrustOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TLS on the HTTP listener, over real sockets with certificates openssl made for the test (README, TLS). */
class HttpTlsTest {
  private static final Duration BOUND = Duration.ofSeconds(15);
  @TempDir
  Path dir;
  private final Vertx client = Vertx.vertx();
  private final Queue<String> warnings = new ConcurrentLinkedQueue<>();
  private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
    @Override
    protected void append(ILoggingEvent e) {
      warnings.add(e.getLevel() + " " + e.getFormattedMessage());
    }
  };
  private TestCerts certs;
  private TestNode node;
  private int port;
  private Path servedCert;
  private Path servedKey;

  @BeforeEach
  void startNode() throws IOException {
    certs = new TestCerts(dir);
    servedCert = dir.resolve("served.pem");
    servedKey = dir.resolve("served.key");
    serve(certs.server("one", "node-one"));
    appender.start();
    reloadLog().addAppender(appender);
    port = TestRedis.freePort();
    node = new TestNode().set("HTTP_PORT", Integer.toString(port))
        .set("SECURITY_HTTP_TLS_CERT_FILE", servedCert.toString())
        .set("SECURITY_HTTP_TLS_KEY_FILE", servedKey.toString())
        .set("SECURITY_HTTP_TLS_RELOAD_INTERVAL", "100ms")
        .start(new TestSteps().registry());
  }

  @AfterEach
  void stop() {
    reloadLog().detachAppender(appender);
    if (node != null) {
      node.close();
    }
    client.close().await();
  }

  private static ch.qos.logback.classic.Logger reloadLog() {
    return (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(TlsReload.class);
  }

  /** Copies a pair over the files the node serves, the certificate first (as a careless rotation would). */
  private void serve(TestCerts.Pair pair) throws IOException {
    Files.copy(pair.cert(), servedCert, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(pair.key(), servedKey, StandardCopyOption.REPLACE_EXISTING);
  }

  /** GET path on a new connection trusting the test CA: the status and the subject of the certificate served. */
  private String get(String path) {
    HttpClientAgent https = client.createHttpClient(new HttpClientOptions().setSsl(true).setKeepAlive(false)
        .setTrustOptions(new PemTrustOptions().addCertPath(certs.ca().toString())));
    try {
      return https.request(HttpMethod.GET, port, "127.0.0.1", path).compose(req -> req.send().compose(resp -> {
        try {
          X509Certificate served = (X509Certificate) req.connection().peerCertificates().get(0);
          return resp.body().map(b -> resp.statusCode() + " " + served.getSubjectX500Principal().getName());
        } catch (Exception e) {
          return Future.failedFuture(e);
        }
      })).await();
    } finally {
      https.close().await();
    }
  }

  @Test
  void the_api_health_metrics_dashboard_and_sockjs_are_served_over_https_to_a_client_trusting_the_ca() {
    assertEquals("200 CN=node-one", get("/health/live"));
    assertEquals("200 CN=node-one", get("/metrics"));
    assertEquals("401 CN=node-one", get("/api/v1/transactions?externalId=x"), "the API answers, asking for a key");
    assertEquals("200 CN=node-one", get("/dashboard/"));
    assertEquals("200 CN=node-one", get("/eventbus/info"), "the SockJS bridge shares the listener");
  }

  @Test
  void a_node_whose_key_is_not_pem_does_not_start_and_says_which_setting_and_file() {
    Path broken = certs.write("broken.key", "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n");
    TestNode refused = new TestNode().set("HTTP_PORT", Integer.toString(TestRedis.freePort()))
        .set("SECURITY_HTTP_TLS_CERT_FILE", servedCert.toString())
        .set("SECURITY_HTTP_TLS_KEY_FILE", broken.toString());
    Exception e = assertThrows(Exception.class, () -> refused.start(new TestSteps().registry()));
    assertTrue(e.getMessage().contains("config key security.http.tls.keyFile (env CONVEYOR_SECURITY_HTTP_TLS_KEY_FILE)"
        + ": the key file " + broken + " holds no private key"), e.getMessage());
  }

  @Test
  void plain_http_to_the_port_gets_no_answer_and_a_client_not_trusting_the_ca_refuses_the_server() {
    assertEquals("200 CN=node-one", get("/health/live"), "the port serves HTTPS");
    HttpClientAgent plain = client.createHttpClient(new HttpClientOptions().setKeepAlive(false));
    Future<Integer> answer = plain.request(HttpMethod.GET, port, "127.0.0.1", "/health/live")
        .compose(req -> req.send().map(resp -> resp.statusCode()));
    assertThrows(Exception.class, answer::await, "plain HTTP got an HTTP answer");
    HttpClientAgent untrusting = client.createHttpClient(new HttpClientOptions().setSsl(true).setKeepAlive(false));
    Future<Integer> refused = untrusting.request(HttpMethod.GET, port, "127.0.0.1", "/health/live")
        .compose(req -> req.send().map(resp -> resp.statusCode()));
    assertThrows(Exception.class, refused::await, "a client without the test CA trusted the server");
  }

  @Test
  void a_replaced_pair_is_served_to_new_connections_and_a_bad_one_leaves_the_served_pair_in_place()
      throws IOException {
    assertEquals("200 CN=node-one", get("/health/live"));
    serve(certs.server("two", "node-two"));
    Eventually.until(BOUND, Duration.ofMillis(50), "the new certificate served", () -> get("/health/live"),
        "200 CN=node-two"::equals);
    assertTrue(warnings.stream().anyMatch(w -> w.startsWith("INFO HTTP TLS: now serving") && w.contains("node-two")),
        "one line says what is served now: " + warnings);
    warnings.clear(); // the copy above may have been seen half done (a new certificate, the old key), and said so

    // a certificate whose key stayed the old one: refused, logged, and node-two goes on serving
    TestCerts.Pair three = certs.server("three", "node-three");
    Files.copy(three.cert(), servedCert, StandardCopyOption.REPLACE_EXISTING);
    Eventually.until(BOUND, "the mismatched pair logged", () -> String.join("\n", warnings),
        w -> w.contains("does not belong to the certificate"));
    assertEquals("200 CN=node-two", get("/health/live"));
    // a certificate file that is not PEM at all
    certs.write("served.pem", "not a certificate\n");
    Eventually.until(BOUND, "the broken file logged", () -> String.join("\n", warnings),
        w -> w.contains("is not PEM"));
    assertEquals("200 CN=node-two", get("/health/live"));
    assertTrue(warnings.stream().filter(w -> w.startsWith("WARN"))
            .allMatch(w -> w.contains("keeps serving CN=node-two")),
        "each refusal says which certificate stays: " + warnings);

    // the rotation completed: served at once on the next look
    serve(certs.server("four", "node-four"));
    Eventually.until(BOUND, Duration.ofMillis(50), "the good pair after bad ones served", () -> get("/health/live"),
        "200 CN=node-four"::equals);
  }
}
