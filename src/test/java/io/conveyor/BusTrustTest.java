package io.conveyor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.config.ConfigLoader;
import io.conveyor.testing.TestCerts;
import io.conveyor.testing.TestCluster;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.NodeInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutual TLS on the clustered bus and the members' attestations (docs/cluster.md): in one JVM, two members with
 * certificates of the cluster CA, a plain member and one with a certificate of another CA, all in one Hazelcast.
 */
class BusTrustTest {
  @TempDir
  Path dir;

  private TestCerts certs(String name) throws java.io.IOException {
    return new TestCerts(Files.createDirectories(dir.resolve(name)));
  }

  @Test
  void members_without_a_certificate_of_the_cluster_ca_receive_none_of_the_requests_and_cannot_send() throws Exception {
    TestCerts ca = certs("ca");
    TestCerts other = certs("other");
    String cluster = TestCluster.newName();
    List<Vertx> members = new ArrayList<>();
    try {
      Vertx serving = join(members, TestCluster.join(cluster, TestCluster.trust(ca.server("a", "a"), ca.ca())));
      Vertx sending = join(members, TestCluster.join(cluster, TestCluster.trust(ca.server("b", "b"), ca.ca())));
      Vertx plain = join(members, TestCluster.join(cluster));
      Vertx foreign = join(members, TestCluster.join(cluster, TestCluster.trust(other.server("f", "f"), other.ca())));
      AtomicInteger served = new AtomicInteger();
      AtomicInteger stolen = new AtomicInteger();
      serving.eventBus().consumer("t.echo", m -> m.reply("a:" + served.incrementAndGet())).completion().await();
      MessageConsumer<Object> rogue = plain.eventBus().consumer("t.echo", m -> {
        stolen.incrementAndGet();
        m.reply("rogue");
      });
      rogue.completion().await();
      foreign.eventBus().consumer("t.echo", m -> {
        stolen.incrementAndGet();
        m.reply("foreign");
      }).completion().await();

      List<Future<Object>> replies = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        replies.add(sending.eventBus().request("t.echo", i).map(m -> m.body()));
      }
      Future.all(replies).await();
      assertTrue(replies.stream().allMatch(r -> r.result().toString().startsWith("a:")), "every reply from a");
      assertEquals(300, served.get());
      assertEquals(0, stolen.get(), "requests routed to members that prove no certificate of the cluster CA");

      // the plain member's own requests reach no member on TLS (its own consumer gone, it has nobody else)
      rogue.unregister().await();
      DeliveryOptions brief = new DeliveryOptions().setSendTimeout(1500);
      List<Future<?>> sent = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        sent.add(plain.eventBus().request("t.echo", "from the rogue", brief));
      }
      Future.join(sent).otherwiseEmpty().await();
      assertTrue(sent.stream().allMatch(Future::failed), "a plain member's request was answered");
      assertEquals(300, served.get(), "a plain member's request reached a member on TLS");
    } finally {
      members.forEach(v -> v.close().await());
    }
  }

  /**
   * After a merge Hazelcast may list a member's consumers before its node info is back: the member is left out for
   * want of proof, and taken in again once its node info is there, though no consumer changed meanwhile.
   */
  @Test
  void a_member_whose_node_info_comes_after_its_consumer_is_routed_to_once_it_is_there() throws Exception {
    TestCerts ca = certs("ca");
    String cluster = TestCluster.newName();
    List<Vertx> members = new ArrayList<>();
    try {
      Vertx late = join(members, TestCluster.join(cluster, TestCluster.trust(ca.server("a", "a"), ca.ca())));
      Vertx sending = join(members, TestCluster.join(cluster, TestCluster.trust(ca.server("b", "b"), ca.ca())));
      sending.eventBus().consumer("t.late", m -> m.reply("b")).completion().await();
      assertEquals("b", sending.eventBus().request("t.late", 0).await().body(), "b routes t.late to itself");
      String lateId = ((io.vertx.core.internal.VertxInternal) late).clusterManager().getNodeId();
      Map<Object, Object> infos = ((io.vertx.spi.cluster.hazelcast.HazelcastClusterManager) ((AttestedClusterManager)
          ((io.vertx.core.internal.VertxInternal) late).clusterManager()).delegate()).getHazelcastInstance()
          .getMap("__vertx.nodeInfo");
      Object info = infos.remove(lateId);
      late.eventBus().consumer("t.late", m -> m.reply("a")).completion().await();
      for (int i = 0; i < 10; i++) {
        assertEquals("b", sending.eventBus().request("t.late", i).await().body(), "routed to a member with no proof");
      }
      infos.put(lateId, info);
      io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), java.time.Duration.ofMillis(20),
          "a request served by the member once its node info is back",
          () -> sending.eventBus().request("t.late", 0).await().body(), "a"::equals);
    } finally {
      members.forEach(v -> v.close().await());
    }
  }

  private static Vertx join(List<Vertx> members, Vertx member) {
    members.add(member);
    return member;
  }

  @Test
  void an_attestation_holds_for_its_own_node_id_host_and_port_only() throws Exception {
    TestCerts ca = certs("ca");
    BusTrust trust = TestCluster.trust(ca.server("a", "a"), ca.ca());
    JsonObject attested = new JsonObject().put(BusTrust.ATTESTATION, trust.attest("node-1", "10.0.0.1", 4000));
    assertNull(trust.refusal("node-1", new NodeInfo("10.0.0.1", 4000, attested)));
    assertTrue(trust.refusal("node-2", new NodeInfo("10.0.0.1", 4000, attested)).startsWith("its signature is not"),
        "replayed under another node id");
    assertTrue(trust.refusal("node-1", new NodeInfo("10.0.0.9", 4000, attested)).startsWith("its signature is not"),
        "replayed with another address");
    assertTrue(trust.refusal("node-1", new NodeInfo("10.0.0.1", 4000, new JsonObject())).startsWith("no attestation"));
    BusTrust foreign = TestCluster.trust(certs("other").server("f", "f"), dir.resolve("other/ca.pem"));
    JsonObject theirs = new JsonObject().put(BusTrust.ATTESTATION, foreign.attest("node-1", "10.0.0.1", 4000));
    assertTrue(trust.refusal("node-1", new NodeInfo("10.0.0.1", 4000, theirs)) != null, "another CA's member");
  }

  @Test
  void a_node_certificate_of_another_ca_stops_the_node_naming_the_setting_and_both_files() throws Exception {
    TestCerts ca = certs("ca");
    TestCerts.Pair theirs = certs("other").server("f", "f");
    ConfigException e = assertThrows(ConfigException.class, () -> TestCluster.trust(theirs, ca.ca()));
    assertTrue(e.getMessage().startsWith("config key security.bus.tls.certFile (env CONVEYOR_SECURITY_BUS_TLS_CERT_FILE)"
        + ": the certificate in " + theirs.cert() + " is not one the cluster CA in " + ca.ca() + " vouches for"),
        e.getMessage());
    Path notPem = ca.write("not.pem", "hello\n");
    ConfigException noCa = assertThrows(ConfigException.class, () -> TestCluster.trust(ca.server("a", "a"), notPem));
    assertTrue(noCa.getMessage().startsWith("config key security.bus.tls.caFile (env CONVEYOR_SECURITY_BUS_TLS_CA_FILE)"
        + ": the CA file " + notPem + " holds no PEM certificate"), noCa.getMessage());
  }

  @Test
  void bus_tls_takes_all_three_files_or_none_and_the_bridge_takes_the_http_pair_unless_it_has_its_own() {
    Config.Security off = ConfigLoader.load(null, Map.of()).security();
    assertTrue(!off.busTls().enabled() && !off.bridgeTls().enabled());
    ConfigException two = assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of(
        "CONVEYOR_SECURITY_BUS_TLS_CERT_FILE", "n.pem", "CONVEYOR_SECURITY_BUS_TLS_KEY_FILE", "n.key")));
    assertTrue(two.getMessage().startsWith("config key security.bus.tls.caFile (env CONVEYOR_SECURITY_BUS_TLS_CA_FILE)"
        + ": expected the path of a PEM file as well"), two.getMessage());
    Config.BridgeTls http = ConfigLoader.load(null, Map.of("CONVEYOR_SECURITY_HTTP_TLS_CERT_FILE", "h.pem",
        "CONVEYOR_SECURITY_HTTP_TLS_KEY_FILE", "h.key")).security().bridgeTls();
    assertEquals(new Config.BridgeTls("h.pem", "h.key", "security.http.tls"), http);
    Config.BridgeTls own = ConfigLoader.load(null, Map.of("CONVEYOR_SECURITY_HTTP_TLS_CERT_FILE", "h.pem",
        "CONVEYOR_SECURITY_HTTP_TLS_KEY_FILE", "h.key", "CONVEYOR_SECURITY_BRIDGE_TLS_CERT_FILE", "b.pem",
        "CONVEYOR_SECURITY_BRIDGE_TLS_KEY_FILE", "b.key")).security().bridgeTls();
    assertEquals(new Config.BridgeTls("b.pem", "b.key", "security.bridge.tls"), own);
  }
}
