package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.testing.ScriptTest;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** checkpoint and complete: what they write, and that an older attempt writes nothing. */
class FencedWriteScriptTest extends ScriptTest {
  private static final Duration DELAY = Duration.ofSeconds(60);
  private String state;

  @BeforeEach
  void arrange() {
    state = h.keys.stateH("tx-1");
    cmd("HSET", state, "processingState", "processing", "attempt", 2, "status", "running", "step", 0,
        "input", "{}", "node", "node-a", "owner", "acme");
    cmd("ZADD", h.keys.processingZ(0), 1, "tx-1");
    cmd("ZADD", h.keys.inflightZ(0, "node-a"), 1, "tx-1");
  }

  private Map<String, String> hash() {
    Map<String, String> m = new TreeMap<>();
    Response r = cmd("HGETALL", state);
    for (String k : r.getKeys()) {
      m.put(k, r.get(k).toString());
    }
    return m;
  }

  private Code complete(RunStore.Completion c) {
    return h.store.run.complete("node-a", DELAY, List.of(c)).await().get(0);
  }

  @Test
  void checkpoint_saves_the_next_step_and_its_input() {
    assertEquals(Code.OK, h.store.run.checkpoint("tx-1", 2, 1, new JsonObject().put("a", 1), null).await());
    assertEquals("1", cmd("HGET", state, "step").toString());
    assertEquals("{\"a\":1}", cmd("HGET", state, "data").toString());
    assertEquals(Long.toString(h.clock.millis()), cmd("HGET", state, "updated").toString());
  }

  @Test
  void one_call_publishes_its_completions_in_one_message_a_line_each() throws Exception {
    String second = h.keys.stateH("tx-2");
    cmd("HSET", second, "processingState", "processing", "attempt", 1, "status", "running", "step", 0,
        "input", "{}", "node", "node-a", "owner", "beta");
    cmd("ZADD", h.keys.processingZ(0), 1, "tx-2");
    try (NotifyProbe probe = NotifyProbe.subscribe(h)) {
      assertEquals(List.of(Code.OK, Code.OK, Code.FENCED), h.store.run.complete("node-a", DELAY, List.of(
          new RunStore.Completion("tx-1", 2, TxStatus.SUCCESS, new JsonObject(), null),
          new RunStore.Completion("tx-2", 1, TxStatus.FAILED, null, "no"),
          new RunStore.Completion("tx-2", 7, TxStatus.SUCCESS, new JsonObject(), null))).await());
      String message = probe.next();
      assertEquals("completed:tx-1:success:acme\ncompleted:tx-2:failed:beta", message);
      List<io.conveyor.model.Completion> each = new java.util.ArrayList<>();
      io.conveyor.model.Completion.each(message, each::add);
      assertEquals(List.of(new io.conveyor.model.Completion("tx-1", "success", "acme"),
          new io.conveyor.model.Completion("tx-2", "failed", "beta")), each);
    }
    List<io.conveyor.model.Completion> none = new java.util.ArrayList<>();
    io.conveyor.model.Completion.each("cancel:tx-1", none::add);
    io.conveyor.model.Completion.each("webhook:wh-1", none::add);
    assertEquals(List.of(), none);
  }

  @Test
  void checkpoint_or_complete_with_an_older_attempt_is_refused_and_changes_nothing() {
    cmd("HSET", state, "attempt", 3);
    Map<String, String> before = hash();
    assertEquals(Code.FENCED, h.store.run.checkpoint("tx-1", 2, 1, new JsonObject(), null).await());
    assertEquals(Code.FENCED,
        complete(new RunStore.Completion("tx-1", 2, TxStatus.SUCCESS, new JsonObject(), null)));
    assertEquals(before, hash());
    assertEquals(1, cmd("ZCARD", h.keys.processingZ(0)).toInteger());
    assertEquals(0, cmd("EXISTS", h.keys.toArchiveZ(0)).toInteger());
  }

  @Test
  void writes_to_an_unknown_transaction_are_not_found() {
    assertEquals(Code.NOT_FOUND, h.store.run.checkpoint("tx-x", 1, 1, new JsonObject(), null).await());
    assertEquals(Code.NOT_FOUND,
        complete(new RunStore.Completion("tx-x", 1, TxStatus.FAILED, null, "n")));
    assertEquals(0, cmd("EXISTS", h.keys.stateH("tx-x")).toInteger());
  }

  @Test
  void complete_finishes_the_transaction_schedules_archiving_and_notifies() throws Exception {
    try (NotifyProbe probe = NotifyProbe.subscribe(h)) {
      assertEquals(Code.OK, complete(new RunStore.Completion("tx-1", 2, TxStatus.SUCCESS,
          new JsonObject().put("done", true), null)));
      assertEquals("completed:tx-1:success:acme", probe.next());
    }
    assertEquals("complete", cmd("HGET", state, "processingState").toString());
    assertEquals("success", cmd("HGET", state, "status").toString());
    assertEquals("{\"done\":true}", cmd("HGET", state, "output").toString());
    assertEquals(Long.toString(h.clock.millis()), cmd("HGET", state, "completed").toString());
    assertNull(cmd("ZSCORE", h.keys.processingZ(0), "tx-1"));
    assertNull(cmd("ZSCORE", h.keys.inflightZ(0, "node-a"), "tx-1"));
    assertEquals(h.clock.millis() + DELAY.toMillis(), cmd("ZSCORE", h.keys.toArchiveZ(0), "tx-1").toLong());
  }

  @Test
  void complete_again_with_the_same_attempt_and_status_answers_ok_and_a_second_status_is_refused() {
    complete(new RunStore.Completion("tx-1", 2, TxStatus.FAILED, null, "nope"));
    assertEquals(Code.OK, complete(new RunStore.Completion("tx-1", 2, TxStatus.FAILED, null, "nope")));
    assertEquals(Code.FENCED,
        complete(new RunStore.Completion("tx-1", 2, TxStatus.SUCCESS, null, null)));
    assertEquals("failed", cmd("HGET", state, "status").toString());
    assertEquals("nope", cmd("HGET", state, "note").toString());
  }

  @Test
  void complete_takes_a_batch_and_answers_each_transaction_on_its_own() {
    cmd("HSET", h.keys.stateH("tx-2"), "processingState", "processing", "attempt", 1, "status", "running");
    cmd("HSET", h.keys.stateH("tx-3"), "processingState", "processing", "attempt", 9, "status", "running");
    List<Code> answers = h.store.run.complete("node-a", DELAY, List.of(
        new RunStore.Completion("tx-1", 2, TxStatus.SUCCESS, null, null),
        new RunStore.Completion("tx-2", 1, TxStatus.TIMEOUT, null, "slow"),
        new RunStore.Completion("tx-3", 8, TxStatus.SUCCESS, null, null),
        new RunStore.Completion("tx-4", 1, TxStatus.SUCCESS, null, null))).await();
    assertEquals(List.of(Code.OK, Code.OK, Code.FENCED, Code.NOT_FOUND), answers);
    assertEquals("timeout", cmd("HGET", h.keys.stateH("tx-2"), "status").toString());
    assertEquals("processing", cmd("HGET", h.keys.stateH("tx-3"), "processingState").toString());
    assertEquals(2, cmd("ZCARD", h.keys.toArchiveZ(0)).toInteger());
  }

  @Test
  void complete_drops_the_run_fields_and_keeps_a_failed_steps_input_for_a_rerun() {
    cmd("HSET", h.keys.stateH("tx-2"), "processingState", "processing", "attempt", 1, "status", "running");
    for (String id : List.of("tx-1", "tx-2")) {
      cmd("HSET", h.keys.stateH(id), "childStatus", "success", "childOutput", "{}", "childNote", "n", "waitingFor",
          "tx-c", "retry", "1", "stepAttempt", "2", "data", "{\"at\":1}");
    }
    assertEquals(List.of(Code.OK, Code.OK), h.store.run.complete("node-a", DELAY, List.of(
        new RunStore.Completion("tx-1", 2, TxStatus.SUCCESS, null, null),
        new RunStore.Completion("tx-2", 1, TxStatus.FAILED, null, "no"))).await());
    for (String field : List.of("childStatus", "childOutput", "childNote", "waitingFor", "retry", "stepAttempt")) {
      assertEquals(0, cmd("HEXISTS", h.keys.stateH("tx-1"), field).toInteger(), field);
      assertEquals(0, cmd("HEXISTS", h.keys.stateH("tx-2"), field).toInteger(), field);
    }
    assertEquals(0, cmd("HEXISTS", h.keys.stateH("tx-1"), "data").toInteger(), "a success needs its input no more");
    assertEquals("{\"at\":1}", cmd("HGET", h.keys.stateH("tx-2"), "data").toString(), "a rerun starts from it");
  }

  @Test
  void complete_refuses_a_status_that_is_not_final() {
    assertEquals(Code.BAD_STATUS,
        complete(new RunStore.Completion("tx-1", 2, TxStatus.RUNNING, null, null)));
    assertEquals("processing", cmd("HGET", state, "processingState").toString());
    assertTrue(cmd("ZSCORE", h.keys.processingZ(0), "tx-1") != null);
  }
}
