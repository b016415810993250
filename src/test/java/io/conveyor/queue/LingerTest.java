package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.domain.Transactions;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** redis.linger on a real node: starts made together go in one call, and every one completes. */
class LingerTest {
  private static final int N = 5;
  private TestNode node;

  @BeforeEach
  void startNode() {
    node = new TestNode().set("REDIS_LINGER", "50ms")
        .pipeline("one", "{'name':'one','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'done':true}}}]}")
        .start(new TestSteps().registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private long calls(String script) {
    Timer t = node.node().metrics().registry().find("conveyor.lua.script").tag("script", script).timer();
    return t == null ? 0 : t.count();
  }

  @Test
  void a_node_that_stops_while_a_completion_lingers_still_writes_it() {
    // the node's own linger is 50 ms; this one is a second, so the completion surely lingers when the stop begins
    TestNode slow = TestNode.withPrefix(node.prefix + "slow:").set("REDIS_LINGER", "1s").set("NODE_DRAIN_TIME", "10s")
        .pipeline("one", "{'name':'one','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'done':true}}}]}")
        .start(new TestSteps().registry());
    try {
      String txId = slow.nodeTransactions().start(new JsonObject().put("type", "one").put("owner", "acme")
          .put("input", new JsonObject())).await().txId(); // from this thread: no linger for the start
      slow.awaitField(txId, "processingState", "processing"); // taken: its completion lingers for a second
      assertEquals("processing", slow.stateField(txId, "processingState"), "still lingering as the stop begins");
      slow.stopKeepingData(); // drains: the runner's slot frees once its completion is written
      assertEquals("complete", slow.stateField(txId, "processingState"));
      assertEquals("success", slow.stateField(txId, "status"));
    } finally {
      slow.close();
    }
  }

  @Test
  void starts_made_in_one_moment_linger_into_one_call_and_all_complete() {
    Transactions tx = node.nodeTransactions();
    long startsBefore = calls("start");
    Vertx vertx = Vertx.vertx();
    try {
      Promise<List<TxSummary>> started = Promise.promise();
      // on a context, as the node's API makes its starts: without a linger the first would go alone
      vertx.runOnContext(v -> {
        List<Future<TxSummary>> all = new ArrayList<>();
        for (int i = 0; i < N; i++) {
          all.add(tx.start(new JsonObject().put("type", "one").put("owner", "acme").put("input",
              new JsonObject().put("i", i))));
        }
        Future.all(all).map(f -> f.<TxSummary>list()).onComplete(started);
      });
      List<TxSummary> summaries = started.future().await();
      // one call per partition they fell in (each has its batcher); without a linger a partition's first start
      // goes alone, and five starts in at most three partitions put two in one of them
      long partitions = summaries.stream().map(s -> node.keys.partitionOf(s.txId())).distinct().count();
      assertEquals(partitions, calls("start") - startsBefore, "the " + N + " starts went in one call a partition");
      for (TxSummary s : summaries) {
        TxSummary end = node.awaitFinal(s.txId());
        assertEquals(TxStatus.SUCCESS, end.status(), s.txId());
        assertEquals(new JsonObject().put("done", true), end.output());
      }
    } finally {
      vertx.close().await();
    }
  }
}
