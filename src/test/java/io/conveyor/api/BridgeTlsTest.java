package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.bus.Addresses;
import io.conveyor.testing.BridgeClient;
import io.conveyor.testing.TestCerts;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemTrustOptions;
import java.io.IOException;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on the bridges (README, TLS): the TCP bridge with a pair of its own, or the HTTP listener's when it has none;
 * the SockJS bridge shares the HTTPS listener. Real sockets, certificates openssl made for the test.
 */
class BridgeTlsTest {
  private static final String KEYS = "acme:client:secret-acme";
  @TempDir
  Path dir;
  private TestNode node;
  private final Vertx client = Vertx.vertx();

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
    client.close().await();
  }

  private TestNode node() {
    return new TestNode().set("API_KEYS", KEYS).pipeline("order", "{'name':'order','nodeGroup':'master',"
        + "'transactionType':true,'steps':[{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}");
  }

  private static JsonObject start(String replyTo) {
    return new JsonObject().put("type", "send").put("address", Addresses.TX_START).put("replyAddress", replyTo)
        .put("body", new JsonObject().put("type", "order").put("input", new JsonObject()));
  }

  /** A socket on TLS that trusts the test CA alone (the handshake done, so the served certificate is known). */
  private static SSLSocket tls(int port, TestCerts certs) throws IOException {
    SSLSocket socket = (SSLSocket) certs.trusting().getSocketFactory().createSocket("127.0.0.1", port);
    socket.startHandshake();
    return socket;
  }

  private static String subject(SSLSocket socket) throws Exception {
    return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSubjectX500Principal().getName();
  }

  @Test
  void the_tcp_bridge_serves_its_own_pair_over_tls_and_plain_tcp_gets_no_answer() throws Exception {
    TestCerts certs = new TestCerts(dir);
    TestCerts.Pair pair = certs.server("bridge", "bridge-one");
    int port = TestRedis.freePort();
    node = node().set("BRIDGE_TCP_PORT", Integer.toString(port))
        .set("SECURITY_BRIDGE_TLS_CERT_FILE", pair.cert().toString())
        .set("SECURITY_BRIDGE_TLS_KEY_FILE", pair.key().toString()).start(new TestSteps().registry());
    SSLSocket socket = tls(port, certs);
    assertEquals("CN=bridge-one", subject(socket));
    try (BridgeClient bridge = new BridgeClient(socket)) {
      bridge.write(start("r-1"), "secret-acme");
      JsonObject reply = bridge.read();
      assertEquals("r-1", reply.getString("address"), reply.encode());
      assertEquals("acme", reply.getJsonObject("body").getString("owner"));
    }
    try (BridgeClient plain = new BridgeClient(port)) {
      plain.write(start("r-2"), "secret-acme");
      assertThrows(IOException.class, () -> {
        JsonObject frame = plain.poll(Duration.ofSeconds(2));
        if (frame == null) {
          throw new IOException("no answer");
        }
      }, "plain TCP got a frame from the TLS bridge");
    }
  }

  @Test
  void without_a_pair_of_its_own_the_tcp_bridge_serves_the_http_pair_and_sockjs_answers_over_wss() throws Exception {
    TestCerts certs = new TestCerts(dir);
    TestCerts.Pair pair = certs.server("node", "node-one");
    int port = TestRedis.freePort();
    int http = TestRedis.freePort();
    node = node().set("BRIDGE_TCP_PORT", Integer.toString(port)).set("HTTP_PORT", Integer.toString(http))
        .set("SECURITY_HTTP_TLS_CERT_FILE", pair.cert().toString())
        .set("SECURITY_HTTP_TLS_KEY_FILE", pair.key().toString()).start(new TestSteps().registry());
    SSLSocket socket = tls(port, certs);
    assertEquals("CN=node-one", subject(socket));
    socket.close();

    WebSocketClient wss = client.createWebSocketClient(new WebSocketClientOptions().setSsl(true)
        .setTrustOptions(new PemTrustOptions().addCertPath(certs.ca().toString())));
    BlockingQueue<JsonObject> frames = new ArrayBlockingQueue<>(16);
    WebSocket ws = wss.connect(http, "127.0.0.1", "/eventbus/websocket").await();
    ws.handler(b -> frames.add(new JsonObject(b)));
    ws.writeTextMessage(start("r-3").put("headers", new JsonObject().put("apiKey", "secret-acme")).encode()).await();
    JsonObject reply = frames.poll(10, TimeUnit.SECONDS);
    assertTrue(reply != null && "r-3".equals(reply.getString("address")), "the reply over wss: " + reply);
    assertEquals("acme", reply.getJsonObject("body").getString("owner"));
    ws.close().await();
  }
}
