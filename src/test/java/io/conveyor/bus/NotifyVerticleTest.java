package io.conveyor.bus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Completions reach this node's event bus, and keep reaching it after the subscription is killed. */
class NotifyVerticleTest {
  private TestNode node;
  private final BlockingQueue<JsonObject> heard = new LinkedBlockingQueue<>();

  @BeforeEach
  void startNode() {
    // the test finds and kills the node's notify connection in the server's CLIENT LIST; on a Redis Cluster
    // the routed client shows a random master's connections
    assumeFalse(TestRedis.clusterMode(), "CLIENT LIST and CLIENT KILL act on one server's connections");
    node = new TestNode()
        .pipeline("one", "{'name':'one','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .start(new TestSteps().registry());
    node.node().vertx().eventBus().<JsonObject>consumer(Addresses.TX_COMPLETED, m -> heard.add(m.body()))
        .completion().await();
  }

  @AfterEach
  void stopNode() {
    if (node != null) { // none when the test was skipped
      node.close();
    }
  }

  private String notifyClientId() {
    return TestRedis.cmd("CLIENT", "LIST").toString().lines()
        .filter(l -> l.contains("name=conveyor-notify:" + node.node().nodeId()))
        .map(l -> l.substring(3, l.indexOf(' '))).findFirst().orElse(null);
  }

  private void assertHeard(String txId) throws InterruptedException {
    JsonObject event = heard.poll(10, TimeUnit.SECONDS);
    assertEquals(new JsonObject().put("txId", txId).put("status", "success"), event);
  }

  @Test
  void a_completion_is_published_on_the_event_bus_and_still_is_after_the_subscription_is_killed()
      throws InterruptedException {
    String first = Eventually.until(Duration.ofSeconds(5), "the notify connection", this::notifyClientId,
        id -> id != null);
    awaitSubscribed();
    assertHeard(node.start("one", new JsonObject()));

    TestRedis.cmd("CLIENT", "KILL", "ID", first);
    Eventually.until(Duration.ofSeconds(10), "a new notify connection", this::notifyClientId,
        id -> id != null && !id.equals(first));
    awaitSubscribed();
    assertHeard(node.start("one", new JsonObject()));
  }

  /** A connection is named before it subscribes: wait until Redis counts the subscriber. */
  private void awaitSubscribed() {
    Eventually.until(Duration.ofSeconds(10), "the node to subscribe to its notify channel",
        () -> TestRedis.cmd("PUBSUB", "NUMSUB", node.keys.notifyChannel(0)).get(1).toInteger(), n -> n == 1);
  }
}
