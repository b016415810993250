package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.model.TxStatus;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pipeline's rateLimit holds its transactions back at dequeue, off any worker, and lets them go as tokens
 * come: a tenth of a second's worth at once, then the rate (100/s: 10 at once, then one each 10 ms). The node's
 * clock is the test's, so tokens come only when the
 * test moves it.
 */
class RateLimitTest {
  private final TestSteps steps = new TestSteps();
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private TestNode node;

  @AfterEach
  void stop() {
    node.close();
  }

  private long held() {
    return node.total("ZCARD", p -> node.keys.qHeldZ(p, "master", "paced"));
  }

  private void settlesAt(int ran, int held) {
    Eventually.until(Duration.ofSeconds(10), ran + " run and " + held + " held",
        () -> steps.recorded.size() + "/" + held(), (ran + "/" + held)::equals);
  }

  @Test
  void a_rate_limited_pipeline_runs_a_seconds_worth_then_as_its_tokens_come() {
    // one partition (a hash-tag prefix on a Redis Cluster): the whole rate is this one queue's
    node = TestNode.withPrefix("{" + io.conveyor.testing.TestRedis.newPrefix().replace(":", "") + "}:")
        .clock(clock).set("REDIS_PARTITIONS", "1").set("NODE_WORKERS", "50").set("NODE_IDLE_WAIT", "200ms")
        .pipeline("paced", "{'name':'paced','nodeGroup':'master','transactionType':true,'rateLimit':'100/s',"
            + "'steps':[{'type':'test/record'}]}")
        .pipeline("free", "{'name':'free','nodeGroup':'master','transactionType':true,"
            + "'steps':[{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .start(steps.registry());
    List<Future<io.conveyor.model.TxSummary>> started = new ArrayList<>();
    for (int i = 0; i < 35; i++) {
      started.add(node.transactions.start(new JsonObject().put("type", "paced").put("owner", "acme")
          .put("input", new JsonObject().put("i", i))));
    }
    Future.all(started).await();
    settlesAt(10, 25);
    assertEquals(25L, node.store.control.waiting("master").await().getJsonObject("held").getLong("paced"));
    // a pipeline without a limit is not held behind it
    String free = node.start("free", new JsonObject());
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(free).status());
    assertEquals(10, steps.recorded.size());

    clock.advance(Duration.ofMillis(100));
    settlesAt(20, 15);
    clock.advance(Duration.ofMillis(50));
    settlesAt(25, 10);
    clock.advance(Duration.ofSeconds(5));
    settlesAt(35, 0);
    for (Future<io.conveyor.model.TxSummary> f : started) {
      assertEquals(TxStatus.SUCCESS, node.awaitFinal(f.result().txId()).status());
    }
    assertEquals(0L, (long) cmd("SCARD", node.keys.qHeldS(0, "master")).toInteger(), "nothing held any more");
  }
}
