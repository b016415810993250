package io.conveyor.redis;

import static io.conveyor.testing.ScriptHarness.txId;
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
    h.pipeline("order", "v1", "shop", true);
    h.pipeline("inner", "v9", "shop", false);
  }

  /** A txId in the partition a start with this owner and externalId goes to (its de-dup key's). */
  private String tx(String name, String owner, String externalId) {
    return txId(h.keys.partitionFor(owner, externalId), name);
  }

  private static StartRequest req(String type, String externalId) {
    return new StartRequest(type, "acme", externalId, new JsonObject().put("m", 1), new JsonObject().put("x", 2));
  }

  @Test
  void start_saves_the_state_queues_the_txId_on_its_group_and_rings_the_group() {
    String tx1 = tx("1", "acme", "ext-1");
    int p = h.keys.partitionOf(tx1);
    QueueStore.StartReply r = h.store.queue.start(new QueueStore.NewTx(tx1, req("order", "ext-1"), "shop"), PERIOD).await();
    assertEquals(Code.OK, r.code());
    assertEquals("v1", r.detail());
    String state = h.keys.stateH(tx1);
    assertEquals("queued", cmd("HGET", state, "processingState").toString());
    assertEquals("running", cmd("HGET", state, "status").toString());
    assertEquals("0", cmd("HGET", state, "attempt").toString());
    assertEquals("v1", cmd("HGET", state, "version").toString());
    assertEquals("acme", cmd("HGET", state, "owner").toString());
    assertEquals("{\"x\":2}", cmd("HGET", state, "input").toString());
    assertEquals(Long.toString(h.clock.millis()), cmd("HGET", state, "created").toString());
    assertEquals(List.of(tx1), list(h.keys.qInZ(p, "shop")));
    assertEquals(1, cmd("LLEN", h.keys.qRingL(p, "shop")).toInteger());
    assertEquals(tx1, cmd("GET", h.keys.externalId("acme", "ext-1")).toString());
    long ttl = cmd("PTTL", h.keys.externalId("acme", "ext-1")).toLong();
    assertTrue(ttl > PERIOD.toMillis() - 60_000 && ttl <= PERIOD.toMillis(), "ttl " + ttl);
  }

  @Test
  void a_second_start_rings_no_more_than_once() {
    h.store.queue.start(new QueueStore.NewTx("tx-1", req("order", null), "shop"), PERIOD).await();
    h.store.queue.start(new QueueStore.NewTx("tx-2", req("order", null), "shop"), PERIOD).await();
    assertEquals(List.of("tx-1", "tx-2"), list(h.keys.qInZ(0, "shop")));
    assertEquals(1, cmd("LLEN", h.keys.qRingL(0, "shop")).toInteger());
  }

  @Test
  void a_txId_that_exists_is_not_started_or_queued_twice() {
    h.store.queue.start(new QueueStore.NewTx("tx-1", req("order", null), "shop"), PERIOD).await();
    assertEquals(Code.DUPLICATE_TX, h.store.queue.start(new QueueStore.NewTx("tx-1", req("order", null), "shop"), PERIOD).await().code());
    assertEquals(List.of("tx-1"), list(h.keys.qInZ(0, "shop")));
  }

  @Test
  void refusals_write_nothing() {
    List<String> arranged = TestRedis.keys(h.prefix).stream().sorted().toList(); // the pipelines (and their copies)
    String tx1 = tx("1", "acme", "e");
    assertEquals(Code.UNKNOWN_TYPE, h.store.queue.start(new QueueStore.NewTx(tx1, req("nope", "e"), "shop"), PERIOD).await().code());
    assertEquals(Code.NOT_STARTABLE, h.store.queue.start(new QueueStore.NewTx(tx1, req("inner", "e"), "shop"), PERIOD).await().code());
    QueueStore.StartReply moved = h.store.queue.start(new QueueStore.NewTx(tx1, req("order", "e"), "elsewhere"), PERIOD).await();
    assertEquals(Code.GROUP_CHANGED, moved.code());
    assertEquals("shop", moved.detail());
    assertEquals(arranged, TestRedis.keys(h.prefix).stream().sorted().toList());
  }

  @Test
  void a_duplicate_externalId_names_the_existing_txId_and_writes_nothing() {
    String tx1 = tx("1", "acme", "ext-1");
    String tx2 = tx("2", "acme", "ext-1");
    h.store.queue.start(new QueueStore.NewTx(tx1, req("order", "ext-1"), "shop"), PERIOD).await();
    QueueStore.StartReply dup = h.store.queue.start(new QueueStore.NewTx(tx2, req("order", "ext-1"), "shop"), PERIOD).await();
    assertEquals(Code.DUPLICATE_EXTERNAL_ID, dup.code());
    assertEquals(tx1, dup.detail());
    assertEquals(0, cmd("EXISTS", h.keys.stateH(tx2)).toInteger());
    assertEquals(List.of(tx1), list(h.keys.qInZ(h.keys.partitionOf(tx1), "shop")));
  }

  @Test
  void another_owner_may_use_the_same_externalId() {
    h.store.queue.start(new QueueStore.NewTx(tx("1", "acme", "ext-1"), req("order", "ext-1"), "shop"), PERIOD).await();
    StartRequest other = new StartRequest("order", "globex", "ext-1", new JsonObject(), new JsonObject());
    assertEquals(Code.OK, h.store.queue.start(new QueueStore.NewTx(tx("2", "globex", "ext-1"), other, "shop"), PERIOD)
        .await().code());
  }

  @Test
  void the_externalId_is_accepted_again_once_its_period_has_passed() {
    h.store.queue.start(new QueueStore.NewTx(tx("1", "acme", "ext-1"), req("order", "ext-1"), "shop"), PERIOD).await();
    // The period is a Redis TTL; expiring the key is what the passing of the period does.
    cmd("PEXPIRE", h.keys.externalId("acme", "ext-1"), 1);
    io.conveyor.testing.Eventually.until(Duration.ofSeconds(5), "the externalId key to expire",
        () -> cmd("EXISTS", h.keys.externalId("acme", "ext-1")).toInteger(), n -> n == 0);
    assertEquals(Code.OK, h.store.queue.start(new QueueStore.NewTx(tx("2", "acme", "ext-1"), req("order", "ext-1"), "shop"),
        PERIOD).await().code());
  }

  @Test
  void a_batch_answers_each_start_on_its_own_in_order() {
    // all in one partition, so one script call answers them all
    String tx1 = tx("1", "acme", "ext-1");
    String tx2 = tx("2", "acme", "ext-1");
    String tx3 = tx("3", "acme", "ext-1");
    String tx4 = tx("4", "acme", "ext-1");
    List<QueueStore.StartReply> replies = h.store.queue.start(List.of(
        new QueueStore.NewTx(tx1, req("order", "ext-1"), "shop"),
        new QueueStore.NewTx(tx2, req("order", "ext-1"), "shop"),
        new QueueStore.NewTx(tx3, req("inner", null), "shop"),
        new QueueStore.NewTx(tx4, req("order", null), "shop")), PERIOD, 0, 0).await();
    assertEquals(List.of(Code.OK, Code.DUPLICATE_EXTERNAL_ID, Code.NOT_STARTABLE, Code.OK),
        replies.stream().map(QueueStore.StartReply::code).toList());
    assertEquals(tx1, replies.get(1).detail());
    assertEquals(List.of(tx1, tx4), list(h.keys.qInZ(h.keys.partitionOf(tx1), "shop")));
    assertEquals(0, cmd("EXISTS", h.keys.stateH(tx2)).toInteger());
    assertEquals(0, cmd("EXISTS", h.keys.stateH(tx3)).toInteger());
  }

  static List<String> list(String key) {
    return cmd(key.contains("qInZ") ? "ZRANGE" : "LRANGE", key, 0, -1).stream().map(Object::toString).toList();
  }
}
