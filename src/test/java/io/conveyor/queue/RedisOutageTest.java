package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.StepResult;
import io.conveyor.testing.BlackholeProxy;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A node whose Redis connections hang gives up on them, reconnects, and finishes its work when Redis is back. */
class RedisOutageTest {
  /** A proxy stands in front of the one server; a cluster client would go around it to every master. */
  @BeforeEach
  void oneServer() {
    assumeFalse(TestRedis.clusterMode(), "the proxy stands in front of one server");
  }

  @Test
  void a_transaction_finishing_while_redis_hangs_completes_once_redis_answers_again() throws Exception {
    TestSteps steps = new TestSteps();
    int redisPort = URI.create(TestRedis.url()).getPort();
    try (BlackholeProxy proxy = new BlackholeProxy(redisPort);
         TestNode node = new TestNode().set("REDIS_URL", "redis://127.0.0.1:" + proxy.port())
             .set("REDIS_TIMEOUT", "500ms")
             .pipeline("hold", "{'name':'hold','nodeGroup':'master','transactionType':true,'steps':["
                 + "{'type':'test/hold'},{'type':'util/fixed-reply','params':{'reply':{'after':'outage'}}}]}")
             .start(steps.registry())) {
      String txId = node.start("hold", new JsonObject());
      var held = steps.held.poll(10, TimeUnit.SECONDS);

      proxy.blackhole();
      int before = proxy.accepted();
      held.complete(StepResult.success(new JsonObject()));
      // the checkpoint hangs; only a timeout makes the node drop the connection and dial again
      Eventually.until(Duration.ofSeconds(10), "the node to give up on a hung connection and reconnect",
          proxy::accepted, n -> n >= before + 2);
      proxy.reopen();

      TxSummary done = node.awaitFinal(txId);
      assertEquals(TxStatus.SUCCESS, done.status());
      assertEquals(new JsonObject().put("after", "outage"), done.output());
      assertEquals(1, done.attempt());
    }
  }

  @Test
  void a_client_asking_while_redis_hangs_is_told_503_unavailable_not_500() throws Exception {
    int redisPort = URI.create(TestRedis.url()).getPort();
    int httpPort = TestRedis.freePort();
    try (BlackholeProxy proxy = new BlackholeProxy(redisPort);
         TestNode node = new TestNode().set("REDIS_URL", "redis://127.0.0.1:" + proxy.port())
             .set("REDIS_TIMEOUT", "500ms").set("HTTP_PORT", Integer.toString(httpPort))
             .set("API_KEYS", "acme:client:k-acme")
             .start(new TestSteps().registry())) {
      proxy.blackhole();
      java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
          java.net.http.HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/api/v1/transactions/tx-"
              + "0".repeat(32))).header("Authorization", "Bearer k-acme").build(),
          java.net.http.HttpResponse.BodyHandlers.ofString());
      proxy.reopen();
      assertEquals(503, r.statusCode(), r.body());
      assertEquals("unavailable", new JsonObject(r.body()).getString("type"));
    }
  }
}
