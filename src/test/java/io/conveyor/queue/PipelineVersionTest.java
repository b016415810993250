package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.pipeline.CompiledPipeline;
import io.conveyor.pipeline.StepResult;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A running transaction keeps the pipeline version it started with; later starts get the new one. */
class PipelineVersionTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  @AfterEach
  void stopNode() {
    node.close();
  }

  private static String definition(int v) {
    return "{'name':'evolving','nodeGroup':'master','transactionType':true,'steps':[{'type':'test/hold'},"
        + "{'type':'util/fixed-reply','params':{'reply':{'version':" + v + "}}}]}";
  }

  @Test
  void a_transaction_started_on_version_one_finishes_on_version_one_after_version_two_is_published() throws Exception {
    node = new TestNode().pipeline("evolving", definition(1)).start(steps.registry());
    String held = node.start("evolving", new JsonObject());
    var promise = steps.held.poll(5, TimeUnit.SECONDS);
    CompiledPipeline v2 = node.node().catalog().parser()
        .parse(new JsonObject(definition(2).replace('\'', '"')), "upload");
    node.node().catalog().publish(node.store.pipelines, v2, System.currentTimeMillis()).await();
    promise.complete(StepResult.success(new JsonObject()));

    assertEquals(1, node.awaitFinal(held).output().getInteger("version"));
    String later = node.start("evolving", new JsonObject());
    steps.held.poll(5, TimeUnit.SECONDS).complete(StepResult.success(new JsonObject()));
    assertEquals(2, node.awaitFinal(later).output().getInteger("version"));
  }

  @Test
  void a_version_uploaded_after_the_file_was_written_stays_current_when_the_node_restarts() throws Exception {
    TestNode first = new TestNode().pipeline("evolving", definition(1)).start(steps.registry());
    CompiledPipeline v2 = first.node().catalog().parser()
        .parse(new JsonObject(definition(2).replace('\'', '"')), "upload");
    first.node().catalog().publish(first.store.pipelines, v2, System.currentTimeMillis() + 1).await();
    first.stopKeepingData();
    // the same pipeline file (version 1, written before the upload) is published again at start
    node = first.sibling().start(steps.registry());
    assertEquals(v2.version(), io.conveyor.testing.TestRedis.cmd("HGET", node.keys.pipelineH("evolving"), "version")
        .toString());
    String txId = node.start("evolving", new JsonObject());
    steps.held.poll(5, TimeUnit.SECONDS).complete(StepResult.success(new JsonObject()));
    assertEquals(2, node.awaitFinal(txId).output().getInteger("version"));
  }
}
