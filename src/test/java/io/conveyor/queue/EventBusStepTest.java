package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** An eventbus step whose consumer is missing for a while waits off the worker and runs once it is there. */
class EventBusStepTest {

  @Test
  void a_step_with_no_consumer_yet_sleeps_and_tries_again_instead_of_failing() {
    try (TestNode n = new TestNode().pipeline("ask", "{'name':'ask','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'eventbus','params':{'address':'steps.late'}}]}").start(new TestSteps().registry())) {
      String txId = n.start("ask", new JsonObject().put("q", 1));
      // no consumer yet: the step sleeps and comes back, its retry counter rising
      Eventually.until(Duration.ofSeconds(10), "the step to have found no consumer twice",
          () -> TestRedis.cmd("HGET", n.keys.stateH(txId), "stepRetry"),
          r -> r != null && Integer.parseInt(r.toString()) >= 2);
      AtomicInteger served = new AtomicInteger();
      n.node().vertx().eventBus().<JsonObject>consumer("steps.late", m -> {
        served.incrementAndGet();
        m.reply(new JsonObject().put("output", new JsonObject().put("a", m.body().getInteger("q") + 1)
            .put("key", m.headers().get("idempotencyKey"))));
      }).completion().await();

      TxSummary done = n.awaitFinal(txId);
      assertEquals(TxStatus.SUCCESS, done.status(), String.valueOf(done.note()));
      assertEquals(new JsonObject().put("a", 2).put("key", txId + ":1"), done.output(),
          "the request carries the step's idempotency key, the same after the sleeps");
      assertTrue(served.get() >= 1);
    }
  }
}
