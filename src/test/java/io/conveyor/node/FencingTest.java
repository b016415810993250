package io.conveyor.node;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.bus.Addresses;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.StepResult;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A node that Redis judged dead (its heartbeat gone and its work taken over, as after a long pause) fences
 * itself and registers again; a node whose Redis came back empty restores what its config owns.
 */
class FencingTest {

  private static TestNode node(TestSteps steps) {
    // the test judges the node dead itself: the node's own reaper (every 10 ms by default) would race it
    return new TestNode().set("HEARTBEAT_INTERVAL", "200ms").set("HEARTBEAT_TTL", "1s").set("REAPER_INTERVAL", "1h")
        .set("REAPER_LEASE", "2h")
        .pipeline("hold", "{'name':'hold','nodeGroup':'master','transactionType':true,'steps':[{'type':'test/hold'}]}")
        .start(steps.registry());
  }

  private static int incarnation(TestNode n) {
    Response info = cmd("GET", n.keys.heartbeat(n.node().nodeId()));
    return info == null ? 0 : new JsonObject(info.toString()).getInteger("incarnation");
  }

  @Test
  void a_node_taken_over_drops_its_work_registers_again_and_its_late_result_is_refused() throws Exception {
    TestSteps steps = new TestSteps();
    try (TestNode n = node(steps)) {
      String nodeId = n.node().nodeId();
      assertEquals(1, incarnation(n));
      String txId = n.start("hold", new JsonObject());
      Promise<StepResult> first = steps.held.poll(10, TimeUnit.SECONDS);

      // what a pause past the TTL looks like from Redis: the heartbeat is gone and the reaper takes over. A beat
      // between the two calls finds its key gone but the node not taken over, so it writes it again (LATE) and
      // carries on: then the reaper finds the node alive, and the pause is made again
      Integer recovered = Eventually.until(Duration.ofSeconds(10), "the reaper to take the node over", () -> {
        cmd("DEL", n.keys.heartbeat(nodeId));
        return n.store.liveness.reap(true, Duration.ofSeconds(10)).await().recovered().get(nodeId);
      }, r -> r != null);
      assertEquals(1, recovered);

      Eventually.until(Duration.ofSeconds(10), "the node to register again", () -> incarnation(n), i -> i == 2);
      assertTrue(cmd("ZSCORE", n.keys.nodesZ(), nodeId) != null);
      // the first execution ends late: its write is refused; later attempts run the step again (the node
      // may have taken the transaction back before it learnt of its fence: that run is refused too)
      first.complete(StepResult.success(new JsonObject().put("run", 0)));
      TxSummary done = Eventually.until(Duration.ofSeconds(10), txId + " to finish", () -> {
        Promise<StepResult> held = steps.held.poll();
        if (held != null) {
          held.complete(StepResult.success(new JsonObject().put("run", 1)));
        }
        return n.store.reads.getState(txId).await();
      }, s -> s.status().isFinal());
      assertEquals(TxStatus.SUCCESS, done.status());
      assertEquals(1, done.output().getInteger("run"), "the taken-over run's result is refused");
      assertTrue(done.attempt() >= 2, "attempt " + done.attempt());
      // and the node takes new work after its fence
      String next = n.start("hold", new JsonObject());
      steps.held.poll(10, TimeUnit.SECONDS).complete(StepResult.success(new JsonObject()));
      assertEquals(TxStatus.SUCCESS, n.awaitFinal(next).status());
    }
  }

  /** What the heartbeat asks of the dequeue verticle when Redis took the node over; answers how many it put back. */
  private static int fence(TestNode n) {
    return n.node().vertx().eventBus().<Integer>request(Addresses.NODE_FENCE, null,
        new DeliveryOptions().setLocalOnly(true)).await().body();
  }

  @Test
  void a_transaction_taken_back_in_a_reply_that_came_while_fenced_runs_again_though_its_old_run_was_still_here()
      throws Exception {
    TestSteps steps = new TestSteps();
    try (TestNode n = node(steps)) {
      String nodeId = n.node().nodeId();
      String txId = n.start("hold", new JsonObject());
      Promise<StepResult> first = steps.held.poll(10, TimeUnit.SECONDS);
      int p = n.keys.partitionOf(txId);
      assertEquals(0, fence(n), "its one run is still this node's: nothing to put back");
      // meanwhile Redis took the transaction over (as reap.lua does), and a dequeue this node sent before its fence
      // took it again (attempt 3); the reply comes while fenced, with the old run (attempt 1) not ended yet
      cmd("DEL", n.keys.inflightZ(p, nodeId));
      cmd("HSET", n.keys.stateH(txId), "processingState", "queued", "attempt", 2);
      TestRedis.queueIn(n.keys.qInZ(p, "master"), txId);
      assertEquals(3, n.store.queue.dequeue(p, "master", nodeId, 1).await().get(0).attempt());
      // a reply that came while fenced is put back as the fence's is (DequeueVerticle.putBackWhileFenced)
      assertEquals(1, fence(n), "attempt 3 runs nowhere: the old run of attempt 1 does not hold it");
      assertEquals("queued", cmd("HGET", n.keys.stateH(txId), "processingState").toString());

      n.node().vertx().eventBus().publish(Addresses.NODE_REGISTERED, 2, new DeliveryOptions().setLocalOnly(true));
      first.complete(StepResult.success(new JsonObject().put("run", 0))); // refused: attempt 1 was taken over
      Promise<StepResult> again = steps.held.poll(10, TimeUnit.SECONDS);
      assertNotNull(again, "registered again, the node runs the step again");
      again.complete(StepResult.success(new JsonObject().put("run", 1)));
      TxSummary done = n.awaitFinal(txId);
      assertEquals(TxStatus.SUCCESS, done.status());
      assertEquals(1, done.output().getInteger("run"), "the old run's result is refused");
    }
  }

  @Test
  void after_redis_lost_its_data_the_node_registers_again_and_publishes_its_pipelines_again() throws Exception {
    TestSteps steps = new TestSteps();
    try (TestNode n = node(steps)) {
      String version = cmd("HGET", n.keys.pipelineH("hold"), "version").toString();
      // every script, then every key, on every server (each master of a cluster: a plain command reaches one).
      // Scripts first: the node restores them once it misses its keys, which must come after the flush
      // from the flush to the check, no other test JVM flushes (the script cache is server-wide)
      try (var flushing = io.conveyor.testing.CrossJvmLock.hold("script-flush")) {
        io.conveyor.testing.TestRedis.onEveryServer("SCRIPT", "FLUSH");
        for (String key : io.conveyor.testing.TestRedis.keys(n.prefix)) {
          cmd("DEL", key);
        }

        Eventually.until(Duration.ofSeconds(10), "the node to register again", () -> incarnation(n), i -> i == 2);
        Eventually.until(Duration.ofSeconds(10), "the pipeline to be published again",
            () -> cmd("HGET", n.keys.pipelineH("hold"), "version"), v -> v != null);
        assertEquals(version, cmd("HGET", n.keys.pipelineH("hold"), "version").toString());
        if (!io.conveyor.testing.TestRedis.clusterMode()) {
          // loaded again at once: rerun, which an idle node never runs, so only the restore loads it. A cluster
          // client sends a keyless SCRIPT LOAD to any one server, so there a master is given a script's source on
          // its first use (NOSCRIPT, then EVAL), which the transaction below needs on each master it touches
          assertEquals(1, cmd("SCRIPT", "EXISTS", n.node().redis().scripts().sent(n.node().redis().scripts().rerun).sha()).get(0).toInteger(),
              "the scripts are loaded again");
        }
      }
      String txId = n.start("hold", new JsonObject());
      steps.held.poll(10, TimeUnit.SECONDS).complete(StepResult.success(new JsonObject()));
      assertEquals(TxStatus.SUCCESS, n.awaitFinal(txId).status());
    }
  }
}
