package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepRegistry;
import io.conveyor.pipeline.StepResult;
import io.conveyor.pipeline.StepType;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * maxConcurrency 20 on a pipeline served by three nodes of 200 workers each (one Redis partition): a step that
 * counts the executions under way at once, across the nodes, never sees more than 20. Prints the pace, to
 * hold against 20 ÷ the step's time (-Dcap.stepMs, default 20 ms: 1,000 a second).
 */
class ConcurrencyCapIT {
  private static final Logger log = LoggerFactory.getLogger(ConcurrencyCapIT.class);
  private static final int CAP = 20;
  private static final int N = Integer.getInteger("cap.transactions", 2000);
  private static final int STEP_MS = Integer.getInteger("cap.stepMs", 20);

  @Test
  @Timeout(300)
  void never_more_than_the_cap_run_at_once_across_three_nodes() {
    AtomicInteger now = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    StepType counted = new StepType() {
      @Override
      public String name() {
        return "it/counted";
      }

      @Override
      public Step create(JsonObject params) {
        return ctx -> {
          most.accumulateAndGet(now.incrementAndGet(), Math::max);
          Promise<StepResult> p = Promise.promise();
          ctx.vertx().setTimer(STEP_MS, t -> {
            now.decrementAndGet();
            done.incrementAndGet();
            p.complete(StepResult.success(new JsonObject()));
          });
          return p.future();
        };
      }
    };
    TestNode first = new TestNode().set("REDIS_PARTITIONS", "1").set("NODE_WORKERS", "200")
        .set("NODE_IDLE_WAIT", "100ms").pipeline("capped", "{'name':'capped','nodeGroup':'master',"
            + "'transactionType':true,'maxConcurrency':" + CAP + ",'steps':[{'type':'it/counted'}]}");
    List<TestNode> nodes = new ArrayList<>(List.of(first, first.sibling(), first.sibling()));
    try {
      for (TestNode n : nodes) {
        n.start(StepRegistry.withBuiltIns().register(counted));
      }
      long t0 = System.nanoTime();
      List<Future<TxSummary>> started = new ArrayList<>(N);
      for (int i = 0; i < N; i++) {
        started.add(first.transactions.start(new JsonObject().put("type", "capped").put("owner", "acme")
            .put("input", new JsonObject().put("i", i))));
      }
      Future.all(started).await();
      Eventually.until(Duration.ofSeconds(120), N + " runs", done::get, d -> d >= N);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      log.info("maxConcurrency {} over 3 nodes of 200 workers: {} runs of a {} ms step in {} ms = {} a second "
          + "(the cap allows {}); most at once: {}", CAP, N, STEP_MS, ms, N * 1000L / Math.max(1, ms),
          CAP * 1000 / STEP_MS, most.get());
      assertTrue(most.get() <= CAP, most.get() + " ran at once");
      assertEquals(CAP, most.get(), "the cap was reached (the nodes had the work)");
      // a slot is freed by the run's completion, written after its step counted done: wait for the last ones
      Eventually.until(Duration.ofSeconds(10), "every slot freed", () -> io.conveyor.testing.TestRedis.cmd("EXISTS",
          first.keys.qRunH(0, "master")).toInteger(), n -> n == 0);
    } finally {
      for (int i = nodes.size() - 1; i >= 0; i--) {
        nodes.get(i).close();
      }
    }
  }
}
