package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.conveyor.api.ConveyorClient;
import io.conveyor.bus.Addresses;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.NodeProcess;
import io.conveyor.testing.TestCerts;
import io.conveyor.testing.TestCluster;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestRedis;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Three node processes with TLS on (HTTPS, and mutual TLS on the bus with a cluster CA of the test's), the README's
 * three-node setup. A member of the test's with a certificate of the cluster CA starts 1,000 transactions over the
 * bus; a fourth member joins Hazelcast without one (a plain clustered Vert.x, the same cluster name and file) and
 * registers a consumer on conveyor.tx.start: it gets none of them, and its own starts reach no node.
 */
class TlsClusterIT {
  private static final int STARTS = 1000;
  private static final String prefix = TestRedis.newPrefix();
  private static final String cluster = TestCluster.newName();
  private static final String table = TestDatabase.newTable();
  private static final List<NodeProcess> nodes = new ArrayList<>();
  private static final int[] httpPorts = new int[3];
  private static final Queue<String> refusals = new ConcurrentLinkedQueue<>();
  private static final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
    @Override
    protected void append(ILoggingEvent e) {
      refusals.add(e.getFormattedMessage());
    }
  };
  private static TestCerts certs;
  private static Vertx member;
  private static Vertx rogue;

  @BeforeAll
  static void startNodes() throws Exception {
    Path dir = Files.createTempDirectory("tls-cluster");
    certs = new TestCerts(dir);
    Path pipelines = Files.createDirectories(dir.resolve("pipelines"));
    Files.writeString(pipelines.resolve("order.json"), ("{'name':'order','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}").replace('\'', '"'));
    for (int i = 0; i < 3; i++) {
      TestCerts.Pair pair = certs.server("node-" + i, "node-" + i);
      httpPorts[i] = TestRedis.freePort();
      Map<String, String> env = new HashMap<>(TestRedis.env());
      env.putAll(Map.of("CONVEYOR_REDIS_PREFIX", prefix, "CONVEYOR_CLUSTER_NAME", cluster,
          "CONVEYOR_PIPELINES_DIR", pipelines.toString(), "CONVEYOR_HTTP_PORT", Integer.toString(httpPorts[i]),
          "CONVEYOR_ARCHIVE_URL", TestDatabase.url(), "CONVEYOR_ARCHIVE_TABLE", table,
          "CONVEYOR_API_KEYS", "it:client:secret-it,other:client:secret-other"));
      env.putAll(Map.of("CONVEYOR_SECURITY_HTTP_TLS_CERT_FILE", pair.cert().toString(),
          "CONVEYOR_SECURITY_HTTP_TLS_KEY_FILE", pair.key().toString(),
          "CONVEYOR_SECURITY_BUS_TLS_CERT_FILE", pair.cert().toString(),
          "CONVEYOR_SECURITY_BUS_TLS_KEY_FILE", pair.key().toString(),
          "CONVEYOR_SECURITY_BUS_TLS_CA_FILE", certs.ca().toString()));
      nodes.add(NodeProcess.start("tls-cluster-" + i, env));
    }
    ((Logger) LoggerFactory.getLogger("io.conveyor.AttestedClusterManager")).addAppender(appender);
    appender.start();
    // the rogue is in before the member sends, so the member's first look at conveyor.tx.start finds its consumer
    rogue = TestCluster.join(cluster);
    member = TestCluster.join(cluster, TestCluster.trust(certs.server("app", "app"), certs.ca()));
    for (NodeProcess n : nodes) {
      n.awaitLine(" started: group master", Duration.ofSeconds(90));
    }
  }

  @AfterAll
  static void stop() throws InterruptedException {
    NodeProcess.terminateAll(nodes, Duration.ofSeconds(60));
    for (Vertx v : new Vertx[] {member, rogue}) {
      if (v != null) {
        v.close().await();
      }
    }
    ((Logger) LoggerFactory.getLogger("io.conveyor.AttestedClusterManager")).detachAppender(appender);
    TestRedis.drop(prefix);
    TestDatabase.drop(table);
  }

  private static HttpResponse<String> get(HttpClient client, String scheme, int port, String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create(scheme + "://127.0.0.1:" + port + path))
        .header("Authorization", "Bearer secret-it").timeout(Duration.ofSeconds(5)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void https_works_with_the_test_ca_and_plain_http_is_refused_on_every_node() throws Exception {
    HttpClient https = HttpClient.newBuilder().sslContext(certs.trusting()).build();
    HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    for (int port : httpPorts) {
      assertEquals(200, get(https, "https", port, "/health/live").statusCode());
      assertThrows(java.io.IOException.class, () -> get(plain, "http", port, "/health/live"), "plain HTTP answered");
    }
  }

  @Test
  void a_member_without_a_cluster_certificate_receives_none_of_1000_starts_and_its_own_starts_reach_no_node()
      throws Exception {
    AtomicInteger stolen = new AtomicInteger();
    MessageConsumer<Object> trap = rogue.eventBus().consumer(Addresses.TX_START, m -> stolen.incrementAndGet());
    trap.completion().await();
    ConveyorClient client = new ConveyorClient(member, "secret-it");
    List<Future<TxSummary>> starts = new ArrayList<>();
    for (int i = 0; i < STARTS; i++) {
      starts.add(client.start("order", "it", new JsonObject().put("i", i)));
    }
    Future.join(starts).otherwiseEmpty().await();
    assertEquals(STARTS, starts.stream().filter(Future::succeeded).count(), "starts that succeeded");
    assertEquals(STARTS, starts.stream().map(f -> f.result().txId()).distinct().count());
    assertEquals(0, stolen.get(), "starts the member without a cluster certificate received");
    assertTrue(refusals.stream().anyMatch(r -> r.contains("is not routed to: no attestation")),
        "the member saw the rogue's consumer and left it out: " + refusals);
    TxSummary last = Eventually.until(Duration.ofSeconds(30), "the last start to end", () -> client.status(
        starts.get(STARTS - 1).result().txId(), "it").await(), s -> s.status().isFinal());
    assertEquals("success", last.status().wire());

    // its own starts, even with a client's key: the nodes' bus refuses a connection without a certificate of the
    // cluster CA
    trap.unregister().await();
    ConveyorClient rogueClient = new ConveyorClient(rogue, "secret-it", Duration.ofSeconds(2));
    List<Future<TxSummary>> tried = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      tried.add(rogueClient.start(new JsonObject().put("type", "order").put("owner", "it")
          .put("externalId", "rogue-" + i).put("input", new JsonObject())));
    }
    Future.join(tried).otherwiseEmpty().await();
    assertTrue(tried.stream().allMatch(Future::failed), "a start from the member without a certificate succeeded");
    HttpClient https = HttpClient.newBuilder().sslContext(certs.trusting()).build();
    for (int i = 0; i < 5; i++) {
      assertEquals(404, get(https, "https", httpPorts[i % 3], "/api/v1/transactions?externalId=rogue-" + i)
          .statusCode(), "a transaction was made for the rogue's start " + i);
    }
  }

  @Test
  void a_start_over_the_bus_without_a_key_or_with_another_owners_client_key_is_refused() throws Exception {
    JsonObject start = new JsonObject().put("type", "order").put("owner", "it").put("input", new JsonObject());
    ReplyException none = assertThrows(ReplyException.class, () -> member.eventBus()
        .request(Addresses.TX_START, start.copy().put("externalId", "keyless")).await());
    assertEquals(401, none.failureCode(), none.getMessage());
    ReplyException other = assertThrows(ReplyException.class, () -> member.eventBus()
        .request(Addresses.TX_START, start.copy().put("externalId", "other-owner"),
            new DeliveryOptions().addHeader("apiKey", "secret-other")).await());
    assertEquals(403, other.failureCode(), other.getMessage());
    HttpClient https = HttpClient.newBuilder().sslContext(certs.trusting()).build();
    for (String id : List.of("keyless", "other-owner")) {
      assertEquals(404, get(https, "https", httpPorts[0], "/api/v1/transactions?externalId=" + id).statusCode(),
          "a refused start made a transaction: " + id);
    }
  }
}
