package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.ScriptTest;
import org.junit.jupiter.api.Test;

/** get-state and put-pipeline. */
class ReadScriptsTest extends ScriptTest {

  @Test
  void get_state_of_an_unknown_transaction_is_null() {
    assertNull(h.store.reads.getState("tx-none").await());
  }

  @Test
  void get_state_maps_the_fields_to_a_summary() {
    cmd("HSET", h.keys.stateH("tx-1"), "owner", "acme", "externalId", "e-1", "type", "order", "version", "v1",
        "status", "success", "processingState", "complete", "attempt", 2, "created", 1000, "updated", 2000,
        "completed", 2000, "output", "{\"ok\":true}", "note", "", "metadata", "{\"m\":1}", "step", 3);
    TxSummary s = h.store.reads.getState("tx-1").await();
    assertEquals("acme", s.owner());
    assertEquals("e-1", s.externalId());
    assertEquals(TxStatus.SUCCESS, s.status());
    assertEquals("complete", s.processingState());
    assertEquals(2, s.attempt());
    assertEquals(1000, s.created().toEpochMilli());
    assertEquals(2000, s.completed().toEpochMilli());
    assertEquals(true, s.output().getBoolean("ok"));
    assertEquals(1, s.metadata().getInteger("m"));
    assertNull(s.note());
    assertNull(s.progressReport());
  }

  @Test
  void put_pipeline_publishes_a_new_version_and_keeps_the_old_one_readable() {
    assertTrue(h.store.pipelines.putPipeline("order", "v1", "shop", true, "{\"n\":1}", null, 0, 0, 0, null, 10).await().changed());
    assertFalse(h.store.pipelines.putPipeline("order", "v1", "shop", true, "{\"n\":1}", null, 0, 0, 0, null, 11).await().changed());
    assertTrue(h.store.pipelines.putPipeline("order", "v2", "other", false, "{\"n\":2}", null, 0, 0, 0, null, 20).await().changed());
    assertEquals("v2", cmd("HGET", h.keys.pipelineH("order"), "version").toString());
    assertEquals("other", cmd("HGET", h.keys.pipelineH("order"), "nodeGroup").toString());
    assertEquals("0", cmd("HGET", h.keys.pipelineH("order"), "isTransactionType").toString());
    assertEquals("{\"n\":1}", h.store.pipelines.pipelineDefinition("order", "v1").await());
    assertEquals("{\"n\":2}", h.store.pipelines.pipelineDefinition("order", "v2").await());
  }

  @Test
  void an_older_publication_never_replaces_a_newer_one_but_its_version_stays_readable() {
    h.store.pipelines.putPipeline("order", "uploaded", "shop", true, "{\"n\":2}", null, 0, 0, 0, null, 2_000).await();
    PipelineStore.Published old = h.store.pipelines.putPipeline("order", "file", "shop", true, "{\"n\":1}", null, 0, 0, 0, null,
        1_000).await();
    assertEquals("uploaded", old.kept());
    assertFalse(old.changed());
    assertEquals("uploaded", cmd("HGET", h.keys.pipelineH("order"), "version").toString());
    assertEquals("{\"n\":1}", h.store.pipelines.pipelineDefinition("order", "file").await());
    // a file changed after the upload is newer, and wins
    assertTrue(h.store.pipelines.putPipeline("order", "edited", "shop", true, "{\"n\":3}", null, 0, 0, 0, null, 3_000).await()
        .changed());
    assertEquals("edited", cmd("HGET", h.keys.pipelineH("order"), "version").toString());
  }
}
