package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.HazelcastConfig;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.TestCluster;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The cluster view splits while an eventbus step's request is out (issue 31): the member that holds the request
 * becomes unreachable (its Hazelcast member is terminated, with no goodbye, as a paused or cut-off process looks),
 * so no answer can come. The step is tried again off the worker and another member's consumer serves it; before,
 * the step's timeout ran out on the request that went nowhere and the transaction ended timeout. A consumer that
 * stays reachable and silent still ends the step timeout (ClusteredNodeTest).
 */
class ViewChangeStepTest {
  private final TestSteps steps = new TestSteps();
  private Vertx lost;
  private Vertx other;
  private TestNode node;

  @AfterEach
  void stopAll() throws Exception {
    if (node != null) {
      node.close();
    }
    if (other != null) {
      other.close().await();
    }
    if (lost != null) {
      lost.close().await(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void a_step_whose_consumer_becomes_unreachable_while_its_request_is_out_runs_again_elsewhere_and_succeeds()
      throws Exception {
    String cluster = TestCluster.newName();
    HazelcastClusterManager lostMember = new HazelcastClusterManager(HazelcastConfig.load("cluster.xml", cluster));
    lost = Vertx.builder().withClusterManager(lostMember).buildClustered().await();
    BlockingQueue<Message<JsonObject>> reached = new ArrayBlockingQueue<>(10);
    lost.eventBus().<JsonObject>consumer("shop.pay", reached::add).completion().await();
    node = new TestNode().set("CLUSTER_ENABLED", "true").set("CLUSTER_NAME", cluster)
        .pipeline("pay", "{'name':'pay','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'eventbus','params':{'address':'shop.pay'},'timeout':'8s'},{'type':'test/record'}]}")
        .start(steps.registry());
    // the other member is in the cluster before the request goes out; its consumer comes once the request is held,
    // so the first request can only reach the member that will be lost
    other = TestCluster.join(cluster);

    String txId = node.start("pay", new JsonObject().put("amount", 3));
    Message<JsonObject> held = reached.poll(20, TimeUnit.SECONDS);
    assertEquals(txId, held == null ? null : held.headers().get("txId"), "the request reached the first member");
    other.eventBus().<JsonObject>consumer("shop.pay", m -> m.reply(new JsonObject()
        .put("output", new JsonObject().put("paidBy", "other"))))
        .completion().await();
    lostMember.getHazelcastInstance().getLifecycleService().terminate();

    TxSummary s = node.awaitFinal(txId, java.time.Duration.ofSeconds(45));
    assertEquals(TxStatus.SUCCESS, s.status(), s.note());
    assertEquals(new JsonObject().put("paidBy", "other").put("recorded", true), s.output());
  }
}
