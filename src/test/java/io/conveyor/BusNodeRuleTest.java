package io.conveyor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.config.ConfigLoader;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestCerts;
import io.conveyor.testing.TestCluster;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.NodeInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Only Conveyor nodes serve conveyor.* addresses on a bus with TLS (security.bus.tls.nodeSubject): a member with a
 * certificate of the cluster CA but a subject that is not a node's serves its own addresses only. With the limits
 * on judging members: refusals remembered and logged once, chains capped, proofs that expire.
 */
class BusNodeRuleTest {
  @TempDir
  Path dir;

  private TestCerts certs(String name) throws java.io.IOException {
    return new TestCerts(Files.createDirectories(dir.resolve(name)));
  }

  @Test
  void an_attested_member_that_is_not_a_node_gets_none_of_the_starts_and_no_key_but_serves_its_own_address()
      throws Exception {
    TestCerts ca = certs("ca");
    String cluster = TestCluster.newName();
    List<Vertx> members = new ArrayList<>();
    try {
      Vertx node = join(members, TestCluster.join(cluster, TestCluster.trust(ca.server("node-a", "node-a"), ca.ca())));
      Vertx sender = join(members, TestCluster.join(cluster, TestCluster.trust(ca.server("node-b", "node-b"),
          ca.ca())));
      Vertx app = join(members, TestCluster.join(cluster, TestCluster.trust(ca.server("app", "app"), ca.ca())));
      AtomicInteger served = new AtomicInteger();
      ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();
      node.eventBus().consumer("conveyor.tx.start", m -> m.reply("node:" + served.incrementAndGet()))
          .completion().await();
      app.eventBus().consumer("conveyor.tx.start", m -> {
        seen.add(String.valueOf(m.headers().get("apiKey")));
        m.reply("app");
      }).completion().await();
      app.eventBus().consumer("steps.app", m -> m.reply("app")).completion().await();

      List<Future<Object>> replies = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        replies.add(sender.eventBus().request("conveyor.tx.start", i,
            new DeliveryOptions().addHeader("apiKey", "secret-" + i)).map(m -> m.body()));
      }
      Future.all(replies).await();
      assertTrue(replies.stream().allMatch(r -> r.result().toString().startsWith("node:")), "every start by node-a");
      assertEquals(200, served.get());
      assertEquals(List.of(), List.copyOf(seen), "keys seen by a member that is not a node");
      assertEquals("app", sender.eventBus().request("steps.app", 0).await().body(), "its own address is served");
    } finally {
      members.forEach(v -> v.close().await());
    }
  }

  @Test
  void a_member_that_proves_nothing_is_logged_once_however_many_addresses_it_serves() throws Exception {
    TestCerts ca = certs("ca");
    String cluster = TestCluster.newName();
    List<Vertx> members = new ArrayList<>();
    ConcurrentLinkedQueue<String> logged = new ConcurrentLinkedQueue<>();
    AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
      @Override
      protected void append(ILoggingEvent e) {
        logged.add(e.getFormattedMessage());
      }
    };
    Logger logger = (Logger) LoggerFactory.getLogger(AttestedClusterManager.class);
    logger.addAppender(appender);
    appender.start();
    try {
      Vertx sender = join(members, TestCluster.join(cluster, TestCluster.trust(ca.server("node-b", "node-b"),
          ca.ca())));
      Vertx foreign = join(members, TestCluster.join(cluster, TestCluster.trust(certs("other").server("node-f",
          "node-f"), dir.resolve("other/ca.pem"))));
      DeliveryOptions brief = new DeliveryOptions().setSendTimeout(1000);
      for (int i = 0; i < 20; i++) {
        foreign.eventBus().consumer("t.each." + i, m -> m.reply("foreign")).completion().await();
        Future<?> sent = sender.eventBus().request("t.each." + i, i, brief);
        sent.otherwiseEmpty().await();
        assertTrue(sent.failed(), "a member of another CA served t.each." + i);
      }
      assertEquals(1, logged.stream().filter(l -> l.contains("is not routed to")).count(), String.join("\n", logged));
    } finally {
      logger.detachAppender(appender);
      members.forEach(v -> v.close().await());
    }
  }

  @Test
  void a_member_whose_certificate_expired_is_judged_again_and_not_routed_to() throws Exception {
    TestCerts ca = certs("ca");
    TestCerts.Pair a = ca.server("node-a", "node-a");
    TestCerts.Pair b = ca.server("node-b", "node-b");
    MutableClock clock = new MutableClock(Clock.systemUTC().millis()); // after the certificates' notBefore
    BusTrust senderTrust = BusTrust.load(new Config.BusTls(b.cert().toString(), b.key().toString(),
        ca.ca().toString()), clock);
    String cluster = TestCluster.newName();
    List<Vertx> members = new ArrayList<>();
    try {
      Vertx node = join(members, TestCluster.join(cluster, TestCluster.trust(a, ca.ca())));
      Vertx sender = join(members, TestCluster.join(cluster, senderTrust));
      node.eventBus().consumer("t.one", m -> m.reply("a")).completion().await();
      assertEquals("a", sender.eventBus().request("t.one", 0).await().body(), "a valid member is routed to");
      clock.advance(Duration.ofDays(3)); // TestCerts certificates hold for 2 days
      node.eventBus().consumer("t.two", m -> m.reply("a")).completion().await();
      Future<?> late = sender.eventBus().request("t.two", 0, new DeliveryOptions().setSendTimeout(1000));
      late.otherwiseEmpty().await();
      assertTrue(late.failed(), "a member whose certificate expired was routed to");
    } finally {
      members.forEach(v -> v.close().await());
    }
  }

  @Test
  void a_verdict_says_whether_the_subject_is_a_nodes_and_an_oversized_chain_is_refused_unread() throws Exception {
    TestCerts ca = certs("ca");
    BusTrust node = TestCluster.trust(ca.server("node-a", "node-a"), ca.ca());
    BusTrust app = TestCluster.trust(ca.server("app", "app"), ca.ca());
    NodeInfo nodeInfo = new NodeInfo("10.0.0.1", 4000, new JsonObject().put(BusTrust.ATTESTATION,
        node.attest("n1", "10.0.0.1", 4000)));
    NodeInfo appInfo = new NodeInfo("10.0.0.1", 4000, new JsonObject().put(BusTrust.ATTESTATION,
        app.attest("n1", "10.0.0.1", 4000)));
    BusTrust.Verdict ofNode = node.verdict("n1", nodeInfo);
    assertNull(ofNode.refusal());
    assertTrue(ofNode.node());
    assertTrue(ofNode.notAfter().isAfter(node.now()) && ofNode.notAfter().isBefore(node.now().plus(Duration.ofDays(3))));
    BusTrust.Verdict ofApp = node.verdict("n1", appInfo);
    assertNull(ofApp.refusal(), "a certificate of the CA");
    assertFalse(ofApp.node(), "CN=app is no node");
    JsonObject big = appInfo.metadata().getJsonObject(BusTrust.ATTESTATION).copy()
        .put("chain", "x".repeat(BusTrust.MAX_CHAIN_CHARS + 1));
    assertTrue(node.refusal("n1", new NodeInfo("10.0.0.1", 4000, new JsonObject().put(BusTrust.ATTESTATION, big)))
        .startsWith("its chain is longer than " + BusTrust.MAX_CHAIN_CHARS));
    JsonObject many = big.copy().put("chain", "-----BEGIN CERTIFICATE-----\n".repeat(9));
    assertTrue(node.refusal("n1", new NodeInfo("10.0.0.1", 4000, new JsonObject().put(BusTrust.ATTESTATION, many)))
        .contains(BusTrust.MAX_CHAIN_CERTIFICATES + " certificates"));
  }

  @Test
  void a_node_whose_certificate_subject_is_not_a_nodes_does_not_start_naming_node_subject() throws Exception {
    TestCerts ca = certs("ca");
    TestCerts.Pair pair = ca.server("app", "app");
    Config.BusTls tls = new Config.BusTls(pair.cert().toString(), pair.key().toString(), ca.ca().toString());
    ConfigException e = assertThrows(ConfigException.class, () -> BusTrust.loadNode(tls, Clock.systemUTC()));
    assertTrue(e.getMessage().startsWith("config key security.bus.tls.nodeSubject (env "
        + "CONVEYOR_SECURITY_BUS_TLS_NODE_SUBJECT): the subject CN app of " + pair.cert() + " does not match node-.*"),
        e.getMessage());
    assertNotNull(BusTrust.loadNode(new Config.BusTls(pair.cert().toString(), pair.key().toString(),
        ca.ca().toString(), "app|node-.*"), Clock.systemUTC()));
  }

  @Test
  void node_subject_defaults_to_node_names_and_a_bad_one_is_refused() {
    assertEquals("node-.*", ConfigLoader.load(null, Map.of()).security().busTls().nodeSubject());
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_SECURITY_BUS_TLS_NODE_SUBJECT", "node-(")));
    assertTrue(e.getMessage().startsWith("config key security.bus.tls.nodeSubject"), e.getMessage());
  }

  @Test
  void a_step_address_regex_that_can_match_a_conveyor_address_is_refused_at_config_read() {
    for (String broad : List.of(".*", ".+", "conveyor\\.tx\\..*", "[a-z]+\\.tx\\.start", "(steps|conveyor)\\..+")) {
      ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
          Map.of("CONVEYOR_BRIDGE_TCP_STEP_ADDRESSES", broad)), broad);
      assertTrue(e.getMessage().startsWith("config key bridge.tcp.stepAddresses (env CONVEYOR_BRIDGE_TCP_STEP_ADDRESSES)"
          + ": expected a regular expression that matches no conveyor.* address"), e.getMessage());
    }
    for (String narrow : List.of("steps\\..+", "(?!conveyor\\.).+\\.step", "billing\\.[a-z]+")) {
      assertEquals(narrow, ConfigLoader.load(null, Map.of("CONVEYOR_BRIDGE_TCP_STEP_ADDRESSES", narrow)).bridge()
          .stepAddresses());
    }
  }

  @Test
  void a_node_with_the_api_role_on_a_plain_clustered_bus_warns_that_keys_cross_it_in_the_clear() {
    Config plain = ConfigLoader.load(null, Map.of("CONVEYOR_CLUSTER_ENABLED", "true"));
    assertTrue(NodeCluster.plainBusWarning(plain).contains("API keys and payloads of the event-bus API cross it in "
        + "the clear"), NodeCluster.plainBusWarning(plain));
    assertNull(NodeCluster.plainBusWarning(ConfigLoader.load(null, Map.of("CONVEYOR_CLUSTER_ENABLED", "false"))),
        "no cluster, no warning");
    assertNull(NodeCluster.plainBusWarning(ConfigLoader.load(null, Map.of("CONVEYOR_CLUSTER_ENABLED", "true",
        "CONVEYOR_SECURITY_BUS_TLS_CERT_FILE", "n.pem", "CONVEYOR_SECURITY_BUS_TLS_KEY_FILE", "n.key",
        "CONVEYOR_SECURITY_BUS_TLS_CA_FILE", "ca.pem"))), "bus TLS, no warning");
    assertNull(NodeCluster.plainBusWarning(ConfigLoader.load(null, Map.of("CONVEYOR_CLUSTER_ENABLED", "true",
        "CONVEYOR_NODE_ROLES", "dequeue"))), "no api role, no warning");
  }

  private static Vertx join(List<Vertx> members, Vertx member) {
    members.add(member);
    return member;
  }
}
