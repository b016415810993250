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

  /** A parent sleeping on the join of n pending branches, as fork.lua leaves it; answers the branches' ids. */
  private List<String> forkOf(String parent, int n) {
    List<String> ids = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      String id = parent + "-b" + i;
      ids.add(id);
      cmd("HSET", h.keys.stateH(id), "processingState", "pending", "status", "running", "owner", "acme",
          "attempt", 0, "group", "master", "type", "t", "parentTxId", parent, "parentGroup", "master");
    }
    JsonObject fork = new JsonObject().put("ids", new io.vertx.core.json.JsonArray(new java.util.ArrayList<>(ids)))
        .put("need", n).put("all", true).put("cof", false).put("max", n).put("next", n);
    cmd("HSET", h.keys.stateH(parent), "processingState", "sleeping", "status", "running", "owner", "acme",
        "attempt", 1, "group", "master", "type", "t", "waitingFor", "fork", "fork", fork.encode());
    return ids;
  }

  private long cancelled(List<String> ids) {
    return ids.stream().filter(id -> "cancelled".equals(String.valueOf(cmd("HGET", h.keys.stateH(id), "status"))))
        .count();
  }

  @Test
  void a_cancel_ends_at_most_20_of_a_tree_in_one_call_and_each_walk_call_20_more_until_none_is_left() {
    List<String> branches = forkOf("tx-root", 100);
    ControlStore.CancelReply c = h.store.control.cancel("tx-root", "acme", DELAY).await();
    assertEquals(Code.CANCELLED, c.code());
    assertEquals(20, cancelled(branches), "the cancel's own call");
    assertEquals(80, c.pending(), "what it answered is still to go");
    assertEquals(60L, h.store.control.walk("tx-root", c.floor(), 1, DELAY).await(), "one walk call");
    assertEquals(40, cancelled(branches));
    assertEquals(0L, h.store.control.walk("tx-root", c.floor(), 10, DELAY).await(), "calls until it is done");
    assertEquals(100, cancelled(branches));
    assertEquals(0, cmd("LLEN", h.keys.cancelL(0)).toInteger());
  }
}
