package io.conveyor.bus;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Completions reach this node's event bus, and keep reaching it after the subscription is killed: on one Redis its
 * one connection, on a Redis Cluster its connection on every master (each partition is subscribed again).
 */
class NotifyVerticleTest {
  private TestNode node;
  private final BlockingQueue<JsonObject> heard = new LinkedBlockingQueue<>();

  @BeforeEach
  void startNode() {
    node = new TestNode()
        .pipeline("one", "{'name':'one','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .start(new TestSteps().registry());
    node.node().vertx().eventBus().<JsonObject>consumer(Addresses.TX_COMPLETED, m -> heard.add(m.body()))
        .completion().await();
  }

  @AfterEach
  void stopNode() {
    if (node != null) { // none when its start failed
      node.close();
    }
  }

  /** The node's notify connections on every server, as "id addr" (an id alone is only unique on its server). */
  private Set<String> notifyClients() {
    return TestRedis.onEveryServer("CLIENT", "LIST").stream().flatMap(r -> r.toString().lines())
        .filter(l -> l.contains("name=conveyor-notify:" + node.node().nodeId()))
        .map(l -> field(l, "id") + " " + field(l, "addr")).collect(Collectors.toSet());
  }

  private static String field(String clientLine, String name) {
    return java.util.Arrays.stream(clientLine.split(" ")).filter(f -> f.startsWith(name + "=")).findFirst()
        .orElseThrow().substring(name.length() + 1);
  }

  private void assertHeard(String txId) throws InterruptedException {
    JsonObject event = heard.poll(10, TimeUnit.SECONDS);
    assertEquals(new JsonObject().put("txId", txId).put("status", "success"), event);
  }

  @Test
  void a_completion_is_published_on_the_event_bus_and_still_is_after_the_subscription_is_killed()
      throws InterruptedException {
    awaitSubscribed();
    Set<String> first = notifyClients();
    assertHeard(node.start("one", new JsonObject()));

    // on every server: the filters together (ID and ADDR) match the node's connection on one server alone
    first.forEach(c -> TestRedis.onEveryServer("CLIENT", "KILL", "ID", c.split(" ")[0], "ADDR", c.split(" ")[1]));
    Eventually.until(Duration.ofSeconds(10), "new notify connections", this::notifyClients,
        now -> now.size() == first.size() && now.stream().noneMatch(first::contains));
    awaitSubscribed();
    assertHeard(node.start("one", new JsonObject()));
  }

  /** A connection is named before it subscribes: wait until Redis counts the subscriber of every partition. */
  private void awaitSubscribed() {
    String numsub = node.keys.shardChannels() ? "SHARDNUMSUB" : "NUMSUB";
    for (int p : node.keys.all()) {
      Eventually.until(Duration.ofSeconds(10), "the node to subscribe to partition " + p + "'s notify channel",
          () -> TestRedis.onEveryServer("PUBSUB", numsub, node.keys.notifyChannel(p)).stream()
              .mapToInt(r -> r.get(1).toInteger()).sum(), n -> n == 1);
    }
  }
}
