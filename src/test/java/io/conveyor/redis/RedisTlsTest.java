package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.RedisClusterFixture;
import io.conveyor.testing.RedisSentinelFixture;
import io.conveyor.testing.RedisTlsServer;
import io.conveyor.testing.TestCerts;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node on rediss:// (README, TLS to Redis and PostgreSQL), against a real redis-server serving TLS on a free port
 * that asks for a client certificate: certificates of a test CA made by openssl, nothing mocked.
 */
class RedisTlsTest {
  private static final String PIPELINE = "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}";
  /** A start refused for its certificate must fail at once, not after a connect timeout or a retry loop. */
  private static final Duration REFUSAL = Duration.ofSeconds(20);
  @TempDir
  static Path dir;
  private static TestCerts certs;
  private static TestCerts.Pair client;
  private static RedisTlsServer server;

  @BeforeAll
  static void startServer() throws Exception {
    Assumptions.assumeTrue(RedisTlsServer.available(), "no /usr/bin/redis-server and redis-cli: TLS to Redis is "
        + "not tested here");
    certs = new TestCerts(Files.createDirectories(dir.resolve("ca")));
    client = certs.server("node", "conveyor-node");
    server = RedisTlsServer.start(certs, true);
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  private static TestNode node(String url) {
    return TestNode.withPrefix(TestRedis.newPrefix()).redis("standalone", List.of(url), "")
        .set("NODE_ROLES", "dequeue").set("NODE_WORKERS", "4").pipeline("order", PIPELINE)
        .set("SECURITY_REDIS_TLS_CA_FILE", certs.ca().toString())
        .set("SECURITY_REDIS_TLS_CERT_FILE", client.cert().toString())
        .set("SECURITY_REDIS_TLS_KEY_FILE", client.key().toString());
  }

  @Test
  void a_node_on_rediss_with_the_ca_and_a_client_certificate_runs_a_transaction_to_its_end() {
    try (TestNode node = node(server.url()).start(new TestSteps().registry())) {
      String txId = node.start("order", new JsonObject());
      TxSummary done = node.awaitFinal(txId);
      assertEquals("success", done.status().wire());
      assertEquals(new JsonObject().put("ok", true), done.output());
      // the node registered itself in this very server (read over its plain port)
      assertTrue(server.cmd("ZRANGE", node.keys.nodesZ(), "0", "-1").startsWith("node-"),
          "the node's registration in the TLS server");
    }
  }

  @Test
  void a_node_on_a_redis_cluster_of_three_masters_over_tls_runs_transactions_in_every_partition() {
    try (RedisClusterFixture cluster = RedisClusterFixture.startTls(3, certs);
         TestNode node = TestNode.withPrefix(TestRedis.newPrefix().replaceAll("[{}]", ""))
             .redis("cluster", cluster.tlsEndpoints(), "").set("NODE_ROLES", "dequeue")
             .set("NODE_WORKERS", "4").pipeline("order", PIPELINE)
             .set("SECURITY_REDIS_TLS_CA_FILE", certs.ca().toString()).start(new TestSteps().registry())) {
      java.util.Map<Integer, String> byPartition = new java.util.HashMap<>();
      // partitions are chosen at random per start: 30 starts miss one of three with a chance of 3 × (2/3)^30
      List<String> started = new java.util.ArrayList<>();
      for (int i = 0; i < 30; i++) {
        started.add(node.start("order", new JsonObject()));
      }
      for (String txId : started) {
        assertEquals("success", node.awaitFinal(txId).status().wire());
        byPartition.putIfAbsent(node.keys.partitionOf(txId), txId);
      }
      java.util.Set<Integer> masters = new java.util.HashSet<>();
      byPartition.values().forEach(txId -> masters.add(cluster.masterOfKey(node.keys.stateH(txId))));
      assertEquals(3, masters.size(), "each partition's master, one each: " + masters);
    }
  }

  @Test
  void under_sentinel_over_tls_the_client_asks_a_sentinel_and_writes_to_the_master_it_names_over_tls() {
    try (RedisSentinelFixture sentinels = RedisSentinelFixture.startTls("tlsmaster", certs)) {
      // the options a node builds (a node's start over TLS is the tests above): only rediss:// Sentinels given
      Config config = TestNode.withPrefix(TestRedis.newPrefix()).redis("sentinel", sentinels.tlsSentinelEndpoints(),
          "tlsmaster").set("SECURITY_REDIS_TLS_CA_FILE", certs.ca().toString()).config();
      Vertx vertx = Vertx.vertx();
      try {
        RedisLink link = new RedisLink(vertx, RedisLink.options(config.redis(), config.security().redisTls()));
        assertEquals("OK", link.send(Request.cmd(Command.SET).arg("tls-probe").arg("written")).await().toString());
        assertEquals("written", link.send(Request.cmd(Command.GET).arg("tls-probe")).await().toString());
        assertEquals("master", link.send(Request.cmd(Command.ROLE)).await().get(0).toString());
      } finally {
        vertx.close().await();
      }
    }
  }

  @Test
  void a_node_that_does_not_trust_the_servers_ca_stops_at_start_naming_the_ca_setting() throws Exception {
    TestCerts other = new TestCerts(Files.createDirectories(dir.resolve("other")));
    TestNode node = node(server.url()).set("SECURITY_REDIS_TLS_CA_FILE", other.ca().toString());
    ConfigException e = assertTimeoutPreemptively(REFUSAL, () -> assertThrows(ConfigException.class,
        () -> node.start(new TestSteps().registry())));
    assertTrue(e.getMessage().contains("the TLS handshake failed") && e.getMessage().contains(
        "security.redis.tls.caFile") && e.getMessage().contains("trust anchors"), e.getMessage());
    node.close();
  }

  @Test
  void the_command_line_with_a_ca_that_did_not_sign_the_servers_certificate_is_told_which_setting() throws Exception {
    TestCerts other = new TestCerts(Files.createDirectories(dir.resolve("other-cli")));
    Config config = node(server.url()).set("SECURITY_REDIS_TLS_CA_FILE", other.ca().toString()).config();
    Vertx vertx = Vertx.vertx();
    try {
      ConfigException e = assertTimeoutPreemptively(REFUSAL, () -> assertThrows(ConfigException.class,
          () -> io.conveyor.ClientRoot.transactions(vertx, config)));
      assertTrue(e.getMessage().contains("security.redis.tls.caFile"), e.getMessage());
    } finally {
      vertx.close().await();
    }
  }

  @Test
  void a_rediss_url_on_a_plain_port_is_told_the_server_speaks_no_tls() {
    // a plain Redis never answers the ClientHello: the handshake gives up after half of redis.timeout
    Config config = node(server.plainUrl().replace("redis://", "rediss://")).set("REDIS_TIMEOUT", "1s").config();
    Vertx vertx = Vertx.vertx();
    try {
      RedisLink link = new RedisLink(vertx, RedisLink.options(config.redis(), config.security().redisTls()));
      Throwable e = assertThrows(Throwable.class, () -> link.send(Request.cmd(Command.PING)).await());
      String m = TlsToRedis.unreachable(config.redis(), e).getMessage();
      assertTrue(m.contains("the server does not speak TLS on that port"), m);
    } finally {
      vertx.close().await();
    }
  }

  @Test
  void a_certificate_that_does_not_name_the_host_dialled_is_refused_unless_verifyHostname_is_off() {
    TestNode strict = node(server.url("127.0.0.2"));
    ConfigException e = assertTimeoutPreemptively(REFUSAL, () -> assertThrows(ConfigException.class,
        () -> strict.start(new TestSteps().registry())));
    assertTrue(e.getMessage().contains("security.redis.tls.verifyHostname"), e.getMessage());
    strict.close();

    Queue<String> warnings = new ConcurrentLinkedQueue<>();
    AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
      @Override
      protected void append(ILoggingEvent event) {
        warnings.add(event.getLevel() + " " + event.getFormattedMessage());
      }
    };
    appender.start();
    ch.qos.logback.classic.Logger log = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
        TlsToRedis.class);
    log.addAppender(appender);
    // the same options a node builds, on a link of the test's own (a node's start is the test above)
    Config config = node(server.url("127.0.0.2")).set("SECURITY_REDIS_TLS_VERIFY_HOSTNAME", "false").config();
    Vertx vertx = Vertx.vertx();
    try {
      RedisLink lax = new RedisLink(vertx, RedisLink.options(config.redis(), config.security().redisTls()));
      assertEquals("PONG", lax.send(Request.cmd(Command.PING)).await().toString());
    } finally {
      log.detachAppender(appender);
      vertx.close().await();
    }
    assertTrue(warnings.stream().anyMatch(w -> w.startsWith("WARN") && w.contains(
        "security.redis.tls.verifyHostname is false")), "a warning: " + warnings);
  }

  @Test
  void a_server_that_asks_for_a_client_certificate_refuses_a_node_without_one_at_start() {
    TestNode node = node(server.url()).set("SECURITY_REDIS_TLS_CERT_FILE", "").set("SECURITY_REDIS_TLS_KEY_FILE", "");
    ConfigException e = assertTimeoutPreemptively(REFUSAL, () -> assertThrows(ConfigException.class,
        () -> node.start(new TestSteps().registry())));
    assertTrue(e.getMessage().contains("cannot reach Redis at " + server.url()) && e.getMessage().contains(
        "certificate_required") && e.getMessage().contains("security.redis.tls.certFile"), e.getMessage());
    node.close();
  }
}
