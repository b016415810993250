package io.conveyor.queue;

import io.conveyor.testing.TestRedis;
import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.NotifyProbe;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Start to completion on a real node, against the real Redis. */
class LifecycleTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  @BeforeEach
  void startNode() {
    node = new TestNode()
        .pipeline("three", "{'name':'three','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'first':1}}},"
            + "{'type':'test/record'},"
            + "{'type':'util/fixed-reply','params':{'reply':{'last':3}}}]}")
        .pipeline("fails", "{'name':'fails','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fail','params':{'note':'card declined'}},{'type':'test/record'}]}")
        .pipeline("aborts", "{'name':'aborts','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fail','params':{'note':'stop','abort':true}},{'type':'test/record'}]}")
        .pipeline("throws", "{'name':'throws','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/throw'},{'type':'test/record'}]}")
        .pipeline("elsewhere", "{'name':'elsewhere','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/elsewhere'},{'type':'test/elsewhere'},{'type':'test/elsewhere'}]}")
        .pipeline("slow", "{'name':'slow','nodeGroup':'master','transactionType':true,'timeout':'5s','steps':["
            + "{'type':'util/delay','params':{'duration':'4s'},'timeout':'50ms'},{'type':'test/record'}]}")
        .start(steps.registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  @Test
  void a_three_step_pipeline_ends_with_the_last_steps_output_archived_later_and_notified() throws Exception {
    String txId;
    try (NotifyProbe probe = NotifyProbe.subscribe(node.store.context.link(), node.keys)) {
      txId = node.start("three", new JsonObject().put("in", 0));
      assertEquals("completed:" + txId + ":success:acme", probe.next());
    }
    TxSummary s = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, s.status());
    assertEquals(new JsonObject().put("last", 3), s.output());
    assertEquals("complete", s.processingState());
    assertEquals(1, s.attempt());
    assertNotNull(s.completed());
    // step 2 saw step 1's output as its input
    assertEquals(new JsonObject().put("first", 1), steps.recorded.get(0).getJsonObject("input"));
    assertEquals("complete", cmd("HGET", node.keys.stateH(txId), "processingState").toString());
    int p = node.keys.partitionOf(txId);
    assertNull(cmd("ZSCORE", node.keys.processingZ(p), txId));
    assertNull(cmd("ZSCORE", node.keys.inflightZ(p, node.node().nodeId()), txId));
    assertNotNull(cmd("ZSCORE", node.keys.toArchiveZ(p), txId));
  }

  @Test
  void a_failing_step_ends_the_transaction_failed_and_later_steps_do_not_run() {
    TxSummary s = node.awaitFinal(node.start("fails", new JsonObject()));
    assertEquals(TxStatus.FAILED, s.status());
    assertEquals("card declined", s.note());
    assertTrue(steps.recorded.isEmpty());
  }

  @Test
  void an_aborting_step_ends_the_transaction_aborted() {
    TxSummary s = node.awaitFinal(node.start("aborts", new JsonObject()));
    assertEquals(TxStatus.ABORTED, s.status());
    assertTrue(steps.recorded.isEmpty());
  }

  @Test
  void a_step_that_throws_ends_the_transaction_internal_error() {
    TxSummary s = node.awaitFinal(node.start("throws", new JsonObject()));
    assertEquals(TxStatus.INTERNAL_ERROR, s.status());
    assertTrue(s.note().contains("boom"), s.note());
    assertTrue(steps.recorded.isEmpty());
  }

  @Test
  void a_step_over_its_timeout_ends_the_transaction_timeout() {
    TxSummary s = node.awaitFinal(node.start("slow", new JsonObject()));
    assertEquals(TxStatus.TIMEOUT, s.status());
    assertTrue(s.note().contains("50ms"), s.note());
    assertTrue(steps.recorded.isEmpty());
  }

  @Test
  void a_checkpoint_saves_each_step_and_the_state_keeps_no_step_data_once_complete() {
    String txId = node.start("three", new JsonObject());
    node.awaitFinal(txId);
    assertEquals(List.of(txId), steps.recorded.stream().map(j -> j.getValue("txId")).toList());
    assertNull(cmd("HGET", node.keys.stateH(txId), "data"));
    assertEquals("2", cmd("HGET", node.keys.stateH(txId), "step").toString());
  }

  @Test
  void a_transaction_queued_again_after_a_checkpoint_resumes_at_the_next_step() {
    // arranged as a recovered transaction: step 1 done (checkpointed), queued again with attempt 1
    String txId = "tx-" + "ab".repeat(16);
    String version = cmd("HGET", node.keys.pipelineH("three"), "version").toString();
    cmd("HSET", node.keys.stateH(txId), "owner", "acme", "externalId", "", "type", "three", "version", version,
        "group", "master", "status", "running", "processingState", "queued", "attempt", 1, "step", 1,
        "data", "{\"resumed\":true}", "created", 1, "updated", 1, "metadata", "{}", "input", "{}");
    int p = node.keys.partitionOf(txId);
    TestRedis.queueIn(node.keys.qInZ(p, "master"), txId);
    // rung as lib/queue.lua rings: a token (a node blocks on it with one partition) and a message on the ring's
    // channel (nodes subscribe to it with several)
    cmd("RPUSH", node.keys.qRingL(p, "master"), "1");
    cmd(node.keys.shardChannels() ? "SPUBLISH" : "PUBLISH", node.keys.qRingL(p, "master"), "1");
    TxSummary s = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, s.status());
    assertEquals(2, s.attempt());
    // step 2 got the checkpointed data, not step 1's output: step 1 did not run again
    assertEquals(new JsonObject().put("resumed", true), steps.recorded.get(0).getJsonObject("input"));
    assertEquals(2L, steps.recorded.get(0).getLong("attempt"));
  }

  @Test
  void steps_answering_from_other_threads_have_every_step_timed_in_step_times() {
    List<String> ids = new java.util.ArrayList<>();
    for (int i = 0; i < 200; i++) {
      ids.add(node.start("elsewhere", new JsonObject().put("i", i)));
    }
    for (String txId : ids) {
      assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
      String times = cmd("HGET", node.keys.stateH(txId), "stepTimes").toString();
      assertEquals(List.of("0", "1", "2"), java.util.Arrays.stream(times.split(";")).map(t -> t.split(":")[0])
          .toList(), txId + " stepTimes " + times);
    }
  }
}
