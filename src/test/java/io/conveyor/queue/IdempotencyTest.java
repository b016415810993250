package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepContext;
import io.conveyor.pipeline.StepRegistry;
import io.conveyor.pipeline.StepResult;
import io.conveyor.pipeline.StepType;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Every step's side effects carry one idempotency key per step and run (the same across retries and takeovers,
 * new for a rerun), and a step declared not idempotent is never run again after a takeover: it ends maybe-ran.
 */
class IdempotencyTest {
  /** The keys the steps saw, in order, as "<key> attempt <attempt>". */
  private final List<String> keys = new CopyOnWriteArrayList<>();
  private final BlockingQueue<Promise<StepResult>> held = new LinkedBlockingQueue<>();
  private final AtomicBoolean broken = new AtomicBoolean(true);
  private TestNode node;

  @AfterEach
  void stop() {
    node.close();
  }

  private StepRegistry registry() {
    return StepRegistry.withBuiltIns()
        .register(type("test/key-fails", ctx -> {
          keys.add(ctx.idempotencyKey());
          return Future.succeededFuture(broken.get() ? new StepResult.Failed("broken", null)
              : StepResult.success(ctx.input()));
        }))
        .register(type("test/key-flaky", ctx -> {
          keys.add(ctx.idempotencyKey());
          return Future.succeededFuture(ctx.stepAttempt() == 1 ? new StepResult.Failed("flaked", null, "failed",
              true, null) : StepResult.success(ctx.input()));
        }))
        .register(type("test/unsure", ctx -> Future.succeededFuture(new StepResult.Failed("no answer, may have "
            + "been handled", null, "maybe-ran", false, null))))
        .register(type("test/key-hold", ctx -> {
          keys.add(ctx.idempotencyKey());
          Promise<StepResult> p = Promise.promise();
          held.add(p);
          return p.future();
        }));
  }

  private static StepType type(String name, Step step) {
    return new StepType() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public Step create(JsonObject params) {
        return step;
      }
    };
  }

  /** A node whose reaper the test drives (as FencingTest): the test judges the node dead itself. */
  private TestNode takeoverNode(String name, String json) {
    return new TestNode().set("HEARTBEAT_INTERVAL", "200ms").set("HEARTBEAT_TTL", "1s").set("REAPER_INTERVAL", "1h")
        .set("REAPER_LEASE", "2h").pipeline(name, json).start(registry());
  }

  /** What a pause past the heartbeat's TTL looks like from Redis: the heartbeat is gone and the reaper takes over. */
  private void takeOver(TestNode n) {
    String nodeId = n.node().nodeId();
    Integer recovered = Eventually.until(Duration.ofSeconds(10), "the reaper to take the node over", () -> {
      cmd("DEL", n.keys.heartbeat(nodeId));
      return n.store.liveness.reap(true, Duration.ofSeconds(10)).await().recovered().get(nodeId);
    }, r -> r != null);
    assertEquals(1, recovered);
  }

  private Promise<StepResult> nextHeld() throws InterruptedException {
    Promise<StepResult> p = held.poll(10, TimeUnit.SECONDS);
    assertNotNull(p, "no step was held within 10 s");
    return p;
  }

  @Test
  void the_key_counts_steps_from_1_and_stays_the_same_across_a_retry() {
    node = new TestNode().pipeline("flaky", "{'name':'flaky','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'util/fixed-reply','params':{'reply':{}}},{'type':'test/key-flaky',"
        + "'retry':{'maxAttempts':2,'initialInterval':'10ms'}}]}").start(registry());
    String txId = node.start("flaky", new JsonObject());
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
    assertEquals(List.of(txId + ":2", txId + ":2"), keys, "two tries of step 2 under one key");
  }

  @Test
  void the_key_stays_the_same_when_another_attempt_runs_the_step_after_a_takeover() throws Exception {
    node = takeoverNode("hold", "{'name':'hold','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'test/key-hold'}]}");
    String txId = node.start("hold", new JsonObject());
    Promise<StepResult> first = nextHeld();
    takeOver(node);
    // the node registers again and takes the transaction back: the step runs a second time, under the same key
    nextHeld().complete(StepResult.success(new JsonObject().put("run", 2)));
    first.complete(StepResult.success(new JsonObject().put("run", 1)));
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, done.status(), done.note());
    assertEquals(2, done.output().getInteger("run"), "the taken-over attempt's result is refused");
    assertEquals(List.of(txId + ":1", txId + ":1"), keys);
  }

  @Test
  void a_rerun_gets_a_new_key_with_its_run_number_and_a_second_rerun_another() {
    node = new TestNode().pipeline("fails", "{'name':'fails','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'test/key-fails'}]}").start(registry());
    String txId = node.start("fails", new JsonObject());
    assertEquals(TxStatus.FAILED, node.awaitFinal(txId).status());
    node.transactions.rerun(txId, "acme", false).await();
    Eventually.until(Duration.ofSeconds(10), "the rerun to run the step", keys::size, n -> n == 2);
    assertEquals(TxStatus.FAILED, node.awaitFinal(txId).status());
    broken.set(false);
    node.transactions.rerun(txId, "acme", true).await();
    Eventually.until(Duration.ofSeconds(10), "the second rerun to run the step", keys::size, n -> n == 3);
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
    assertEquals(List.of(txId + ":1", txId + ":1:r2", txId + ":1:r3"), keys);
  }

  @Test
  void a_step_declared_not_idempotent_ends_maybe_ran_after_a_takeover_instead_of_running_again() throws Exception {
    node = takeoverNode("once", "{'name':'once','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'util/fixed-reply','params':{'reply':{}}},{'type':'test/key-hold','idempotent':false}]}");
    String txId = node.start("once", new JsonObject());
    Promise<StepResult> first = nextHeld();
    takeOver(node);
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.INTERNAL_ERROR, done.status());
    assertTrue(done.note().contains("step 2 (test/key-hold) may have run"), done.note());
    JsonObject error = done.errors().getJsonObject(done.errors().size() - 1);
    assertEquals("maybe-ran", error.getString("code"));
    assertEquals(2, error.getInteger("step"));
    first.complete(StepResult.success(new JsonObject())); // the lost attempt ends late: refused, nothing changes
    assertEquals(List.of(txId + ":2"), keys, "the step ran once");
    assertEquals(TxStatus.INTERNAL_ERROR, node.store.reads.getState(txId).await().status());

    // an operator's rerun resolves it: the step runs again, under the rerun's key
    node.transactions.rerun(txId, "acme", false).await();
    nextHeld().complete(StepResult.success(new JsonObject().put("done", true)));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
    assertEquals(List.of(txId + ":2", txId + ":2:r2"), keys);
  }

  @Test
  void a_node_that_stops_with_the_step_still_running_hands_it_back_as_maybe_ran() throws Exception {
    TestNode first = new TestNode().set("NODE_DRAIN_TIME", "100ms").pipeline("once", "{'name':'once',"
        + "'nodeGroup':'master','transactionType':true,'steps':[{'type':'test/key-hold','idempotent':false}]}");
    first.start(registry());
    String txId = first.start("once", new JsonObject());
    nextHeld(); // never answered: the step still runs when the drain time ends
    node = first.sibling();
    first.stopKeepingData();
    node.start(registry());
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.INTERNAL_ERROR, done.status());
    assertEquals("maybe-ran", done.errors().getJsonObject(done.errors().size() - 1).getString("code"));
    assertEquals(List.of(txId + ":1"), keys, "the step ran once");
  }

  @Test
  void a_step_that_answers_maybe_ran_ends_the_transaction_internal_error_not_failed() {
    node = new TestNode().pipeline("unsure", "{'name':'unsure','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'test/unsure','idempotent':false,'retry':{'maxAttempts':3,'initialInterval':'10ms'}}]}")
        .start(registry());
    TxSummary done = node.awaitFinal(node.start("unsure", new JsonObject()));
    assertEquals(TxStatus.INTERNAL_ERROR, done.status());
    assertEquals(1, done.errors().size(), "not retried");
    assertEquals("maybe-ran", done.errors().getJsonObject(0).getString("code"));
  }

  @Test
  void a_retry_sleep_is_not_a_takeover_a_step_declared_not_idempotent_runs_again_under_its_policy() {
    node = new TestNode().pipeline("flaky", "{'name':'flaky','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'test/key-flaky','idempotent':false,'retry':{'maxAttempts':2,'initialInterval':'10ms'}}]}")
        .start(registry());
    String txId = node.start("flaky", new JsonObject());
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, done.status(), done.note());
    assertEquals(List.of(txId + ":1", txId + ":1"), keys);
  }
}
