package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.conveyor.testing.ScriptTest;
import io.conveyor.testing.TestRedis;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** rerun: an ended transaction queued again at its failed step or its first, restored from an archived state. */
class RerunScriptTest extends ScriptTest {

  private void ended(String txId, String status, String data) {
    cmd("HSET", h.keys.stateH(txId), "processingState", "complete", "status", status, "owner", "acme", "group", "g",
        "type", "p", "step", 2, "input", "{\"in\":1}", "note", "no", "completed", 5, "output", "{}", "created", 1);
    if (data != null) {
      cmd("HSET", h.keys.stateH(txId), "data", data);
    }
    cmd("ZADD", h.keys.toArchiveZ(0), 99, txId);
  }

  private String field(String txId, String name) {
    var r = cmd("HGET", h.keys.stateH(txId), name);
    return r == null ? null : r.toString();
  }

  private List<String> queue() {
    return TestRedis.inQueue(h.keys.qInZ(0, "g"));
  }

  @Test
  void a_failed_transaction_is_queued_again_at_its_failed_step_with_that_steps_input() {
    ended("tx-1", "failed", "{\"at\":2}");
    cmd("HSET", h.keys.stateH("tx-1"), "takenOver", 2); // it ended maybe-ran: the rerun runs the step again
    ControlStore.Reply r = h.store.control.rerun("tx-1", "acme", false, null).await();
    assertEquals(Code.OK, r.code());
    assertEquals("2", r.detail());
    assertEquals("queued", field("tx-1", "processingState"));
    assertEquals("running", field("tx-1", "status"));
    assertEquals("{\"at\":2}", field("tx-1", "data"));
    assertNull(field("tx-1", "completed"));
    assertNull(field("tx-1", "output"));
    assertEquals("2", field("tx-1", "run"), "its steps' idempotency keys get :r2");
    assertNull(field("tx-1", "takenOver"));
    assertEquals(List.of("tx-1"), queue());
    assertNull(cmd("ZSCORE", h.keys.toArchiveZ(0), "tx-1"), "not archived while it runs again");
    assertEquals(new JsonObject().put("status", "failed").put("note", "no").put("step", 3).put("completed", 5),
        new io.vertx.core.json.JsonArray(field("tx-1", "runs")).getJsonObject(0));
    // it runs now: a second rerun is refused
    assertEquals(Code.NOT_RERUNNABLE, h.store.control.rerun("tx-1", "acme", false, null).await().code());
  }

  @Test
  void past_max_errors_the_oldest_runs_fold_into_one_summary_and_the_newest_stay() {
    ControlStore control = new ControlStore(RetryScriptTest.withMaxErrors(h.store.context, 2));
    for (int n = 1; n <= 4; n++) {
      cmd("HSET", h.keys.stateH("tx-3"), "processingState", "complete", "status", n % 2 == 0 ? "failed" : "cancelled",
          "owner", "acme", "group", "g", "type", "p", "step", 0, "input", "{}", "note", "run " + n, "completed", n);
      assertEquals(Code.OK, control.rerun("tx-3", "acme", true, null).await().code());
      assertEquals(Math.min(n, 2), new io.vertx.core.json.JsonArray(field("tx-3", "runs")).size(), "after " + n);
    }
    io.vertx.core.json.JsonArray runs = new io.vertx.core.json.JsonArray(field("tx-3", "runs"));
    assertEquals(new JsonObject().put("summary", true).put("dropped", 3).put("from", 1).put("to", 3)
        .put("statuses", new JsonObject().put("cancelled", 2).put("failed", 1)), runs.getJsonObject(0));
    assertEquals("run 4", runs.getJsonObject(1).getString("note"));
    assertEquals("5", field("tx-3", "run"), "the run counter counts every rerun, folded ones too: 4 reruns, run 5");
  }

  @Test
  void from_the_start_it_takes_the_transactions_input_and_without_the_failed_steps_input_only_that_works() {
    ended("tx-2", "cancelled", null);
    assertEquals(Code.NO_STEP_INPUT, h.store.control.rerun("tx-2", "acme", false, null).await().code());
    assertEquals("complete", field("tx-2", "processingState"), "nothing written");
    assertEquals(Code.OK, h.store.control.rerun("tx-2", "acme", true, null).await().code());
    assertEquals("0", field("tx-2", "step"));
    assertEquals("{\"in\":1}", field("tx-2", "data"));
  }

  @Test
  void a_success_another_owner_and_an_unknown_one_are_refused_and_an_archived_state_is_restored() {
    ended("tx-3", "success", null);
    ControlStore.Reply success = h.store.control.rerun("tx-3", "acme", true, null).await();
    assertEquals(Code.NOT_RERUNNABLE, success.code());
    assertEquals("success", success.detail());
    assertEquals(Code.NOT_FOUND, h.store.control.rerun("tx-3", "globex", true, null).await().code());
    assertEquals(Code.NOT_FOUND, h.store.control.rerun("tx-4", "acme", true, null).await().code());

    JsonObject archived = new JsonObject().put("processingState", "complete").put("status", "timeout")
        .put("owner", "acme").put("group", "g").put("type", "p").put("step", "1").put("data", "{\"x\":1}")
        .put("input", "{}").put("created", "1").put("completed", "7");
    assertEquals(Code.NOT_FOUND, h.store.control.rerun("tx-4", "globex", false, archived).await().code());
    assertEquals(0L, cmd("EXISTS", h.keys.stateH("tx-4")).toLong(), "another owner's archived state is not restored");
    assertEquals(Code.OK, h.store.control.rerun("tx-4", "acme", false, archived).await().code());
    assertEquals("{\"x\":1}", field("tx-4", "data"));
    assertEquals(List.of("tx-4"), queue());
  }
}
