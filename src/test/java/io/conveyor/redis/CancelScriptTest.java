package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.testing.ScriptTest;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class CancelScriptTest extends ScriptTest {
  private static final Duration DELAY = Duration.ofSeconds(60);

  private void tx(String id, String state) {
    cmd("HSET", h.keys.stateH(id), "processingState", state, "status", "running", "owner", "acme", "attempt", 1);
  }

  @Test
  void a_queued_transaction_ends_cancelled_at_once_notified_and_due_for_archiving() throws Exception {
    tx("tx-q", "queued");
    try (NotifyProbe probe = NotifyProbe.subscribe(h)) {
      assertEquals(Code.CANCELLED, h.store.control.cancel("tx-q", "acme", DELAY).await().code());
      assertEquals("completed:tx-q:cancelled:acme", probe.next());
    }
    assertEquals("complete", cmd("HGET", h.keys.stateH("tx-q"), "processingState").toString());
    assertEquals("cancelled", cmd("HGET", h.keys.stateH("tx-q"), "status").toString());
    assertEquals(h.clock.millis() + DELAY.toMillis(), cmd("ZSCORE", h.keys.toArchiveZ(0), "tx-q").toLong());
  }

  @Test
  void a_running_transaction_is_cancelled_at_its_next_checkpoint() {
    tx("tx-r", "processing");
    assertEquals(Code.CANCEL_REQUESTED, h.store.control.cancel("tx-r", "acme", DELAY).await().code());
    assertEquals("running", cmd("HGET", h.keys.stateH("tx-r"), "status").toString());
    assertEquals(Code.CANCELLED, h.store.run.checkpoint("tx-r", 1, 1, new JsonObject(), null).await());
    assertEquals(0, cmd("HEXISTS", h.keys.stateH("tx-r"), "data").toInteger());
  }

  @Test
  void an_ended_transaction_or_another_owners_is_refused_and_nothing_changes() {
    tx("tx-e", "complete");
    cmd("HSET", h.keys.stateH("tx-e"), "status", "success");
    ControlStore.CancelReply ended = h.store.control.cancel("tx-e", "acme", DELAY).await();
    assertEquals(List.of(Code.ALREADY_FINAL, "success"), List.of(ended.code(), ended.detail()));
    tx("tx-o", "queued");
    assertEquals(Code.NOT_FOUND, h.store.control.cancel("tx-o", "globex", DELAY).await().code());
    assertEquals(Code.NOT_FOUND, h.store.control.cancel("tx-none", "acme", DELAY).await().code());
    assertEquals("queued", cmd("HGET", h.keys.stateH("tx-o"), "processingState").toString());
    assertEquals(0, cmd("EXISTS", h.keys.toArchiveZ(0)).toInteger());
  }
}
