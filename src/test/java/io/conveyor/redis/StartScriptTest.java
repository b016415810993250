package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.StartRequest;
import io.conveyor.testing.ScriptTest;
import io.conveyor.testing.TestRedis;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class StartScriptTest extends ScriptTest {
  private static final Duration PERIOD = Duration.ofHours(6);

  @BeforeEach
  void arrange() {
    cmd("HSET", h.keys.pipelineH("order"), "version", "v1", "nodeGroup", "shop", "isTransactionType", "1");
    cmd("HSET", h.keys.pipelineH("inner"), "version", "v9", "nodeGroup", "shop", "isTransactionType", "0");
  }

  private static StartRequest req(String type, String externalId) {
    return new StartRequest(type, "acme", externalId, new JsonObject().put("m", 1), new JsonObject().put("x", 2));
  }

  @Test
  void start_saves_the_state_queues_the_txId_on_its_group_and_rings_the_group() {
    QueueStore.StartReply r = h.store.queue.start(new QueueStore.NewTx("tx-1", req("order", "ext-1"), "shop"), PERIOD).await();
    assertEquals(Code.OK, r.code());
    assertEquals("v1", r.detail());
    String state = h.keys.stateH("tx-1");
    assertEquals("queued", cmd("HGET", state, "processingState").toString());
    assertEquals("running", cmd("HGET", state, "status").toString());
    assertEquals("0", cmd("HGET", state, "attempt").toString());
    assertEquals("v1", cmd("HGET", state, "version").toString());
    assertEquals("acme", cmd("HGET", state, "owner").toString());
    assertEquals("{\"x\":2}", cmd("HGET", state, "input").toString());
    assertEquals(Long.toString(h.clock.millis()), cmd("HGET", state, "created").toString());
    assertEquals(List.of("tx-1"), list(h.keys.qInL("shop")));
    assertEquals(1, cmd("LLEN", h.keys.qRingL("shop")).toInteger());
    assertEquals("tx-1", cmd("GET", h.keys.externalId("acme", "ext-1")).toString());
    long ttl = cmd("PTTL", h.keys.externalId("acme", "ext-1")).toLong();
    assertTrue(ttl > PERIOD.toMillis() - 60_000 && ttl <= PERIOD.toMillis(), "ttl " + ttl);
  }

  @Test
  void a_second_start_rings_no_more_than_once() {
    h.store.queue.start(new QueueStore.NewTx("tx-1", req("order", null), "shop"), PERIOD).await();
    h.store.queue.start(new QueueStore.NewTx("tx-2", req("order", null), "shop"), PERIOD).await();
    assertEquals(List.of("tx-1", "tx-2"), list(h.keys.qInL("shop")));
    assertEquals(1, cmd("LLEN", h.keys.qRingL("shop")).toInteger());
  }

  @Test
  void a_txId_that_exists_is_not_started_or_queued_twice() {
    h.store.queue.start(new QueueStore.NewTx("tx-1", req("order", null), "shop"), PERIOD).await();
    assertEquals(Code.DUPLICATE_TX, h.store.queue.start(new QueueStore.NewTx("tx-1", req("order", null), "shop"), PERIOD).await().code());
    assertEquals(List.of("tx-1"), list(h.keys.qInL("shop")));
  }

  @Test
  void refusals_write_nothing() {
    assertEquals(Code.UNKNOWN_TYPE, h.store.queue.start(new QueueStore.NewTx("tx-1", req("nope", "e"), "shop"), PERIOD).await().code());
    assertEquals(Code.NOT_STARTABLE, h.store.queue.start(new QueueStore.NewTx("tx-1", req("inner", "e"), "shop"), PERIOD).await().code());
    QueueStore.StartReply moved = h.store.queue.start(new QueueStore.NewTx("tx-1", req("order", "e"), "elsewhere"), PERIOD).await();
    assertEquals(Code.GROUP_CHANGED, moved.code());
    assertEquals("shop", moved.detail());
    assertEquals(List.of(h.keys.pipelineH("inner"), h.keys.pipelineH("order")),
        TestRedis.keys(h.prefix).stream().sorted().toList());
  }

  @Test
  void a_duplicate_externalId_names_the_existing_txId_and_writes_nothing() {
    h.store.queue.start(new QueueStore.NewTx("tx-1", req("order", "ext-1"), "shop"), PERIOD).await();
    QueueStore.StartReply dup = h.store.queue.start(new QueueStore.NewTx("tx-2", req("order", "ext-1"), "shop"), PERIOD).await();
    assertEquals(Code.DUPLICATE_EXTERNAL_ID, dup.code());
    assertEquals("tx-1", dup.detail());
    assertEquals(0, cmd("EXISTS", h.keys.stateH("tx-2")).toInteger());
    assertEquals(List.of("tx-1"), list(h.keys.qInL("shop")));
  }

  @Test
  void another_owner_may_use_the_same_externalId() {
    h.store.queue.start(new QueueStore.NewTx("tx-1", req("order", "ext-1"), "shop"), PERIOD).await();
    StartRequest other = new StartRequest("order", "globex", "ext-1", new JsonObject(), new JsonObject());
    assertEquals(Code.OK, h.store.queue.start(new QueueStore.NewTx("tx-2", other, "shop"), PERIOD).await().code());
  }

  @Test
  void the_externalId_is_accepted_again_once_its_period_has_passed() {
    h.store.queue.start(new QueueStore.NewTx("tx-1", req("order", "ext-1"), "shop"), PERIOD).await();
    // The period is a Redis TTL; expiring the key is what the passing of the period does.
    cmd("PEXPIRE", h.keys.externalId("acme", "ext-1"), 1);
    io.conveyor.testing.Eventually.until(Duration.ofSeconds(5), "the externalId key to expire",
        () -> cmd("EXISTS", h.keys.externalId("acme", "ext-1")).toInteger(), n -> n == 0);
    assertEquals(Code.OK, h.store.queue.start(new QueueStore.NewTx("tx-2", req("order", "ext-1"), "shop"), PERIOD).await().code());
  }

  @Test
  void a_batch_answers_each_start_on_its_own_in_order() {
    List<QueueStore.StartReply> replies = h.store.queue.start(List.of(
        new QueueStore.NewTx("tx-1", req("order", "ext-1"), "shop"),
        new QueueStore.NewTx("tx-2", req("order", "ext-1"), "shop"),
        new QueueStore.NewTx("tx-3", req("inner", null), "shop"),
        new QueueStore.NewTx("tx-4", req("order", null), "shop")), PERIOD).await();
    assertEquals(List.of(Code.OK, Code.DUPLICATE_EXTERNAL_ID, Code.NOT_STARTABLE, Code.OK),
        replies.stream().map(QueueStore.StartReply::code).toList());
    assertEquals("tx-1", replies.get(1).detail());
    assertEquals(List.of("tx-1", "tx-4"), list(h.keys.qInL("shop")));
    assertEquals(0, cmd("EXISTS", h.keys.stateH("tx-2")).toInteger());
    assertEquals(0, cmd("EXISTS", h.keys.stateH("tx-3")).toInteger());
  }

  static List<String> list(String key) {
    return cmd("LRANGE", key, 0, -1).stream().map(Object::toString).toList();
  }
}
