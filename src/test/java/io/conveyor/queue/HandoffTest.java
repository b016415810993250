package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.domain.Transactions;
import io.conveyor.model.Dequeued;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.StepResult;
import io.conveyor.redis.Handoff;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A node's own starts hand new work straight to its idle workers (start.lua's hand-off), and a start whose reply
 * was lost after a hand-off leaves nothing stranded: the node puts back what it holds but does not run.
 */
class HandoffTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;
  private final io.vertx.core.Vertx client = io.vertx.core.Vertx.vertx();

  @AfterEach
  void stopNode() {
    node.close();
    client.close().await();
  }

  private TestNode idleNode() {
    node = new TestNode().set("NODE_IDLE_WAIT", "60s")
        .pipeline("hold", "{'name':'hold','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/hold'}]}")
        .start(steps.registry());
    // the node's workers wait for work once their first take found none: only then are they offered
    Eventually.until(Duration.ofSeconds(5), "the node's workers to wait for work", () -> {
      Handoff h = node.node().handoff();
      int got = h.reserve(1).await();
      if (got > 0) {
        h.handed(got, List.of()); // give the slot back
      }
      return got;
    }, n -> n == 1);
    return node;
  }

  /** A Transactions on the node's Redis that offers the node's workers, as its API's do. */
  private Transactions offering(Handoff handoff) {
    return new Transactions(node.node().redis().open(client), node.node().catalog(),
        node.config(), io.vertx.core.Future.succeededFuture(node.node().archive()),
        new io.conveyor.metrics.NodeMetrics(false), io.conveyor.trace.Tracing.OFF, () -> handoff);
  }

  private static JsonObject body() {
    return new JsonObject().put("type", "hold").put("owner", "acme").put("input", new JsonObject());
  }

  @Test
  void a_start_on_an_idle_node_runs_there_without_the_queue_or_the_ring() throws Exception {
    idleNode();
    long dequeues = dequeueCalls();
    TxSummary answered = offering(node.node().handoff()).start(body()).await();
    String txId = answered.txId();
    StepHold held = new StepHold(steps.held.poll(5, TimeUnit.SECONDS));
    int p = node.keys.partitionOf(txId);
    // the start's answer says what Redis holds: handed to this node's workers, its first attempt
    assertEquals("processing", answered.processingState());
    assertEquals(1, answered.attempt());
    // it runs here already: never on the in-queue, the ring never rung
    assertEquals(0, node.total("ZCARD", q -> node.keys.qInZ(q, "master")));
    assertEquals(0, cmd("LLEN", node.keys.qRingL(p, "master")).toInteger());
    assertEquals(1, cmd("ZCARD", node.keys.inflightZ(p, node.node().nodeId())).toInteger());
    assertEquals("1", cmd("HGET", node.keys.stateH(txId), "attempt").toString());
    held.release();
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
    assertEquals(dequeues, dequeueCalls(), "no dequeue ran: neither for the start nor after its run ended");
  }

  /** dequeue.lua calls the node has made so far (its script timer's count). */
  private long dequeueCalls() {
    io.micrometer.core.instrument.Timer t = node.node().metrics().registry().find("conveyor.lua.script")
        .tag("script", "dequeue").timer();
    return t == null ? 0 : t.count();
  }

  @Test
  void work_handed_over_by_a_start_whose_reply_was_lost_goes_back_on_its_queue_and_runs() throws Exception {
    idleNode();
    Handoff real = node.node().handoff();
    // the start's call lands, but its reply is taken as lost: the node is told so instead of being handed the work
    Handoff lostReply = new Handoff() {
      @Override
      public String nodeId() {
        return real.nodeId();
      }

      @Override
      public String group() {
        return real.group();
      }

      @Override
      public io.vertx.core.Future<Integer> reserve(int n) {
        return real.reserve(n);
      }

      @Override
      public void handed(int reserved, List<Dequeued> txs) {
        assertEquals(1, txs.size(), "the start was taken for the node");
        real.lost(reserved);
      }

      @Override
      public void lost(int reserved) {
        real.lost(reserved);
      }
    };
    String txId = offering(lostReply).start(body()).await().txId();
    // the node put it back (attempt 1 → 2) and took it from the queue (→ 3): it runs once, here
    StepHold held = new StepHold(steps.held.poll(10, TimeUnit.SECONDS));
    assertEquals("3", cmd("HGET", node.keys.stateH(txId), "attempt").toString());
    held.release();
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
    assertTrue(steps.held.isEmpty(), "it ran once");
  }

  /** A held step, released with success. */
  private record StepHold(io.vertx.core.Promise<StepResult> promise) {
    StepHold {
      if (promise == null) {
        throw new AssertionError("no step was held in time");
      }
    }

    void release() {
      promise.complete(StepResult.success(new JsonObject()));
    }
  }
}
