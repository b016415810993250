package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.domain.Transactions;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Starting and reading transactions: what is refused, with which kind, and that a refusal writes nothing. */
class TransactionsTest {
  private TestNode node;

  @BeforeEach
  void startNode() {
    node = new TestNode().set("TRANSACTIONS_MAX_METADATA_BYTES", "64")
        .set("TRANSACTIONS_EXTERNAL_ID_PERIOD", "1m").set("NODE_ROLES", "api")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .pipeline("inner", "{'name':'inner','nodeGroup':'master','steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .start(new TestSteps().registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private TxException refused(JsonObject body) {
    List<String> before = TestRedis.traces(node.prefix);
    TxException e = assertThrows(TxException.class, () -> node.transactions.start(body).await());
    assertEquals(before.stream().sorted().toList(), TestRedis.traces(node.prefix).stream().sorted().toList(),
        "a refused start wrote to Redis");
    return e;
  }

  private static JsonObject body(String type) {
    return new JsonObject().put("type", type).put("owner", "acme").put("input", new JsonObject());
  }

  @Test
  void bad_starts_are_refused_with_a_clear_kind_and_field_and_write_nothing() {
    TxException unknown = refused(body("nope"));
    assertEquals(Kind.UNKNOWN_TYPE, unknown.kind());
    assertTrue(unknown.getMessage().contains("nope"), unknown.getMessage());
    assertEquals(Kind.NOT_STARTABLE, refused(body("inner")).kind());
    TxException owner = refused(body("order").putNull("owner"));
    assertEquals(Kind.INVALID_INPUT, owner.kind());
    assertEquals("owner", owner.field());
    // ':' would let owner "a:b" and externalId "c" share a key with owner "a" and externalId "b:c"
    assertEquals("owner", refused(body("order").put("owner", "a:b")).field());
    TxException input = refused(body("order").put("input", "text"));
    assertEquals("input", input.field());
    TxException big = refused(body("order").put("metadata", new JsonObject().put("k", "x".repeat(100))));
    assertEquals(Kind.TOO_LARGE, big.kind());
    assertEquals("metadata", big.field());
    assertEquals(Kind.INVALID_INPUT, refused(null).kind());
  }

  @Test
  void with_wait_replicas_a_start_is_answered_only_once_a_replica_has_it() {
    try (TestNode waiting = new TestNode().set("REDIS_WAIT_REPLICAS", "1").set("REDIS_WAIT_TIMEOUT", "100ms")
        .set("NODE_ROLES", "api").pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,"
            + "'steps':[{'type':'util/fixed-reply','params':{'reply':{}}}]}").start(new TestSteps().registry())) {
      Transactions t = waiting.nodeTransactions();
      if (TestRedis.clusterMode()) {
        // every master of the test cluster has a replica: WAIT 1 is met
        assertEquals(TxStatus.RUNNING, t.start(body("order")).await().status());
        return;
      }
      // the standalone test Redis has no replica: the start is written, but not confirmed
      TxException e = assertThrows(TxException.class, () -> t.start(body("order")).await());
      assertEquals(Kind.UNAVAILABLE, e.kind());
      assertTrue(e.getMessage().contains("0 of 1 replicas") && e.getMessage().contains("redis.waitReplicas"),
          e.getMessage());
      assertEquals("queued", waiting.store.reads.getState(e.txId()).await().processingState(),
          "the write stands on the master");
    }
  }

  @Test
  void a_start_answers_a_running_summary_with_a_new_txId() {
    TxSummary s = node.transactions.start(body("order").put("externalId", "e-1")).await();
    assertTrue(s.txId().matches("tx-[0-9a-f]{32}"), s.txId());
    assertEquals(TxStatus.RUNNING, s.status());
    assertEquals("queued", s.processingState());
    assertEquals("e-1", s.externalId());
    TxSummary read = node.transactions.status(s.txId(), "acme").await();
    assertEquals(s.created(), read.created());
    assertEquals("order", read.type());
  }

  @Test
  void another_owner_cannot_read_a_transaction_it_did_not_start() {
    TxSummary s = node.transactions.start(body("order")).await();
    TxException e = assertThrows(TxException.class, () -> node.transactions.status(s.txId(), "globex").await());
    assertEquals(Kind.NOT_FOUND, e.kind());
  }

  @Test
  void a_duplicate_externalId_is_refused_naming_the_first_until_the_period_passes() {
    TxSummary first = node.transactions.start(body("order").put("externalId", "e-1")).await();
    TxException dup = assertThrows(TxException.class,
        () -> node.transactions.start(body("order").put("externalId", "e-1")).await());
    assertEquals(Kind.DUPLICATE_EXTERNAL_ID, dup.kind());
    assertEquals(first.txId(), dup.txId());
    assertEquals(1, node.total("ZCARD", p -> node.keys.qInZ(p, "master")));
    node.transactions.start(body("order").put("externalId", "e-1").put("owner", "globex")).await();
    // the reservation lasts the period (1m here: a shorter one could pass during a slow moment above), kept by
    // Redis's own expiry; its end is played by deleting it
    long ttl = TestRedis.cmd("PTTL", node.keys.externalId("acme", "e-1")).toLong();
    assertTrue(ttl > 50_000 && ttl <= 60_000, ttl + " ms left");
    TestRedis.cmd("DEL", node.keys.externalId("acme", "e-1"));
    TxSummary again = node.transactions.start(body("order").put("externalId", "e-1")).await();
    assertTrue(!again.txId().equals(first.txId()));
  }
}
