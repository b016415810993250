package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxException;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.PortHolder;
import io.conveyor.testing.TestCluster;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A node in a cluster with a user's own Vert.x ("shop"): eventbus steps served by the shop's consumers, and
 * the shop starting and reading transactions through ConveyorClient. Hazelcast's first ports are held by another
 * process meanwhile (a foreign Hazelcast cluster and servers that never reply), as other programs on a machine
 * may hold them: the members must find each other further up the port range.
 */
class ClusteredNodeTest {
  private static final TestSteps steps = new TestSteps();
  private static final List<String> seenTxIds = new CopyOnWriteArrayList<>();
  private static Vertx shop;
  private static TestNode node;
  private static int httpPort;
  private static PortHolder holder;

  @BeforeAll
  static void startClusterAndNode() throws java.io.IOException {
    // the first three ports of a member range of this test's own (the shipped file's, moved): held silent, they
    // would stall the joins of every other test JVM's members on the shared 5701-5720
    TestCluster.PortRange range = TestCluster.ownPorts();
    holder = PortHolder.start(range.base(), range.base() + 1, range.base() + 2);
    org.slf4j.LoggerFactory.getLogger(ClusteredNodeTest.class).info("another process holds {}", holder.held);
    String cluster = TestCluster.newName();
    shop = TestCluster.join(cluster, range.file());
    shop.eventBus().<JsonObject>consumer("shop.charge", m -> {
      seenTxIds.add(m.headers().get("txId"));
      m.reply(new JsonObject().put("status", "success")
          .put("output", new JsonObject().put("charged", m.body().getInteger("amount"))));
    }).completion().await();
    shop.eventBus().consumer("shop.silent", m -> { }).completion().await();
    shop.eventBus().consumer("shop.refuse", m -> m.fail(402, "card declined")).completion().await();
    httpPort = io.conveyor.testing.TestRedis.freePort();
    node = new TestNode().set("CLUSTER_ENABLED", "true").set("CLUSTER_NAME", cluster).set("CLUSTER_CONFIG", range.file())
        .set("HTTP_PORT", Integer.toString(httpPort)).set("API_KEYS", "acme:client:k-acme")
        .pipeline("held", "{'name':'held','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/hold'}]}")
        .pipeline("charge", "{'name':'charge','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'eventbus','params':{'address':'shop.charge'}},{'type':'test/record'}]}")
        .pipeline("silent", "{'name':'silent','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'eventbus','params':{'address':'shop.silent'},'timeout':'300ms'},{'type':'test/record'}]}")
        .pipeline("refused", "{'name':'refused','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'eventbus','params':{'address':'shop.refuse'}}]}")
        .pipeline("nobody", "{'name':'nobody','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'eventbus','params':{'address':'shop.nobody','noConsumerTries':1}}]}")
        .start(steps.registry());
  }

  @AfterAll
  static void stopAll() throws InterruptedException {
    node.close();
    shop.close().await();
    holder.close();
  }

  @Test
  void a_consumer_on_another_node_serves_the_step_and_its_output_flows_into_the_next() {
    String txId = node.start("charge", new JsonObject().put("amount", 5));
    TxSummary s = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, s.status());
    assertEquals(new JsonObject().put("charged", 5), steps.recorded.stream()
        .filter(r -> r.getString("txId").equals(txId)).findFirst().orElseThrow().getJsonObject("input"));
    assertTrue(seenTxIds.contains(txId), "the consumer saw the txId header");
  }

  @Test
  void a_consumer_that_never_replies_ends_the_step_timeout() {
    String txId = node.start("silent", new JsonObject());
    assertEquals(TxStatus.TIMEOUT, node.awaitFinal(txId).status());
    assertTrue(steps.recorded.stream().noneMatch(r -> r.getString("txId").equals(txId)));
  }

  @Test
  void a_consumer_that_fails_the_message_ends_the_step_failed_with_its_message() {
    TxSummary s = node.awaitFinal(node.start("refused", new JsonObject()));
    assertEquals(TxStatus.FAILED, s.status());
    assertTrue(s.note().contains("card declined"), s.note());
  }

  @Test
  void no_consumer_at_the_address_is_an_internal_error_once_its_tries_are_spent() {
    TxSummary s = node.awaitFinal(node.start("nobody", new JsonObject()));
    assertEquals(TxStatus.INTERNAL_ERROR, s.status());
  }

  @Test
  void a_program_in_another_clustered_vertx_starts_and_reads_a_transaction_with_the_client() {
    ConveyorClient client = new ConveyorClient(shop, "k-acme");
    TxSummary started = client.start("charge", "acme", new JsonObject().put("amount", 7)).await();
    assertEquals(TxStatus.RUNNING, started.status());
    TxSummary done = io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "the charge to finish",
        () -> client.status(started.txId(), "acme").await(), x -> x.status().isFinal());
    assertEquals(TxStatus.SUCCESS, done.status());
    assertEquals(new JsonObject().put("charged", 7).put("recorded", true), done.output());
    assertEquals(started.created(), done.created());

    TxException refused = org.junit.jupiter.api.Assertions.assertThrows(TxException.class,
        () -> client.status(started.txId(), "globex").await());
    assertEquals(TxException.Kind.FORBIDDEN, refused.kind(), "acme's key reads acme's only");
    TxException forged = org.junit.jupiter.api.Assertions.assertThrows(TxException.class,
        () -> new ConveyorClient(shop, "k-forged").status(started.txId(), "acme").await());
    assertEquals(TxException.Kind.UNAUTHORIZED, forged.kind(), "a member of the cluster without a key reads nothing");
    TxException unknown = org.junit.jupiter.api.Assertions.assertThrows(TxException.class,
        () -> client.start("nope", "acme", new JsonObject()).await());
    assertEquals(TxException.Kind.UNKNOWN_TYPE, unknown.kind());
  }

  @Test
  void a_long_poll_listens_on_its_own_node_only_and_nothing_of_it_reaches_the_cluster() throws Exception {
    String txId = node.start("held", new JsonObject());
    var held = steps.held.poll(10, java.util.concurrent.TimeUnit.SECONDS);
    double before = handlers();
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    var poll = http.sendAsync(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + httpPort
            + "/api/v1/transactions/" + txId + "?wait=20")).header("Authorization", "Bearer k-acme").build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    String address = "conveyor.tx.completed.acme";
    io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "the long-poll to listen on its node",
        ClusteredNodeTest::handlers, n -> n > before);
    // had the long-poll registered cluster-wide, this request would reach it (and time out unanswered)
    io.vertx.core.eventbus.ReplyException e = org.junit.jupiter.api.Assertions.assertThrows(
        io.vertx.core.eventbus.ReplyException.class, () -> shop.eventBus().request(address, new JsonObject(),
            new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(2000)).await());
    assertEquals(io.vertx.core.eventbus.ReplyFailure.NO_HANDLERS, e.failureType(), e.getMessage());
    held.complete(io.conveyor.pipeline.StepResult.success(new JsonObject()));
    var answer = poll.get(20, java.util.concurrent.TimeUnit.SECONDS);
    assertEquals(200, answer.statusCode(), answer.body());
    assertEquals("success", new JsonObject(answer.body()).getString("status"));
  }

  /** The node's event-bus handlers, as its Vert.x metrics count them (they carry no address label). */
  private static double handlers() {
    return node.node().metrics().registry().get("vertx.eventbus.handlers").gauge().value();
  }
}
