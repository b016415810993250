package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxException;
import io.conveyor.model.TxStatus;
import io.conveyor.redis.OwnerStore;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** maxLive: live transactions per owner, counted where one begins and where it ends, held at the start. */
class LiveLimitTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  @BeforeEach
  void startNode() {
    node = new TestNode().set("REAPER_INTERVAL", "20ms")
        .pipeline("quick", "{'name':'quick','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .pipeline("broken", "{'name':'broken','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fail','params':{'note':'no stock'}}]}")
        .pipeline("approval", "{'name':'approval','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/wait','params':{'switch':'go'}}]}")
        .pipeline("child", "{'name':'child','nodeGroup':'master','steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'child':true}}}]}")
        .pipeline("parent", "{'name':'parent','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'child'}}]}")
        .pipeline("fan", "{'name':'fan','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/parallel','params':{'branches':[{'pipeline':'child'},{'pipeline':'child'}]}}]}")
        .pipeline("undo", "{'name':'undo','nodeGroup':'master','steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'undone':true}}}]}")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'onFailure':'undo',"
            + "'steps':[{'type':'util/fail','params':{'note':'declined'}}]}")
        .start(steps.registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  /** The owner's live count summed over the partitions (0 when no partition holds one). */
  private long live(String owner) {
    long n = 0;
    for (int p : node.keys.all()) {
      var v = TestRedis.cmd("HGET", node.keys.liveOwnersH(p), owner);
      n += v == null ? 0 : v.toLong();
    }
    return n;
  }

  private String start(String owner, String type, String externalId) {
    JsonObject body = new JsonObject().put("type", type).put("owner", owner).put("input", new JsonObject());
    if (externalId != null) {
      body.put("externalId", externalId);
    }
    return node.transactions.start(body).await().txId();
  }

  /** n externalIds of the owner whose transactions land in partition p. */
  private List<String> externalIdsIn(int p, String owner, int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; out.size() < n; i++) {
      if (node.keys.partitionFor(owner, "e-" + i) == p) {
        out.add("e-" + i);
      }
    }
    return out;
  }

  @Test
  void the_live_count_returns_to_zero_after_success_failure_cancel_rerun_children_branches_and_compensation() {
    List<String> ending = List.of(start("acme", "quick", null), start("acme", "broken", null),
        start("acme", "parent", null), start("acme", "fan", null), start("acme", "order", null));
    String cancelled = start("acme", "approval", null);
    String approved = start("acme", "approval", null);
    assertEquals(List.of(TxStatus.SUCCESS, TxStatus.FAILED, TxStatus.SUCCESS, TxStatus.SUCCESS, TxStatus.FAILED),
        ending.stream().map(id -> node.awaitFinal(id).status()).toList());
    // what waits for a switch is live; everything else ended (the compensation of order too)
    Eventually.until(Duration.ofSeconds(10), "only the two waiting to count", () -> live("acme"), n -> n == 2);

    node.transactions.cancel(cancelled, "acme").await();
    node.transactions.setSwitch(approved, "acme", "go", true).await();
    assertEquals(TxStatus.CANCELLED, node.awaitFinal(cancelled).status());
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(approved).status());
    node.transactions.rerun(ending.get(1), "acme", false).await();
    assertEquals(TxStatus.FAILED, node.awaitFinal(ending.get(1)).status());
    node.transactions.rerun(cancelled, "acme", false).await();
    node.transactions.cancel(cancelled, "acme").await();
    assertEquals(TxStatus.CANCELLED, node.awaitFinal(cancelled).status());

    Eventually.until(Duration.ofSeconds(10), "the count to return to 0", () -> live("acme"), n -> n == 0);
    for (int p : node.keys.all()) {
      Object left = TestRedis.cmd("HGET", node.keys.liveOwnersH(p), "acme");
      assertTrue(left == null || "0".equals(left.toString()), "partition " + p + " counts 0 or nothing: " + left);
    }
  }

  @Test
  void a_start_past_the_owners_max_live_is_refused_until_one_ends_and_another_owner_is_not() {
    int parts = node.keys.partitions();
    // maxLive = partitions: a share of 1 in each, and every start below lands in partition 0
    node.store.owners.put("acme", new OwnerStore.Limits(null, null, null, parts, null, 0)).await();
    List<String> acme = externalIdsIn(0, "acme", 2);
    String first = start("acme", "approval", acme.get(0));

    TxException refused = assertThrows(TxException.class, () -> start("acme", "approval", acme.get(1)));
    assertEquals(TxException.Kind.LIVE_LIMIT, refused.kind());
    assertEquals(429, refused.kind().status);
    assertTrue(refused.getMessage().contains("maxLive = " + parts), refused.getMessage());
    assertEquals(0, TestRedis.cmd("EXISTS", node.keys.externalId("acme", acme.get(1))).toInteger(),
        "a refused start writes nothing: its externalId stays free");
    assertEquals(1, live("acme"));

    List<String> globex = externalIdsIn(0, "globex", 3);
    for (String other : globex) {
      start("globex", "approval", other);
    }
    assertEquals(3, live("globex"));
    // refused after its owner's count was read (and reserved, lib/live.lua): the reservation goes back
    TxException duplicate = assertThrows(TxException.class, () -> start("globex", "approval", globex.get(0)));
    assertEquals(TxException.Kind.DUPLICATE_EXTERNAL_ID, duplicate.kind());
    assertEquals(3, live("globex"));

    // a cancel ends a transaction at once only once it waits (a running one ends at its next step boundary)
    waitingForItsSwitch(first);
    node.transactions.cancel(first, "acme").await();
    String second = start("acme", "approval", acme.get(1));
    assertEquals(1, live("acme"));
    waitingForItsSwitch(second);
    node.transactions.cancel(second, "acme").await();
    assertEquals(0, live("acme"));
  }

  private void waitingForItsSwitch(String txId) {
    Eventually.until(Duration.ofSeconds(10), txId + " to wait for its switch",
        () -> String.valueOf(TestRedis.cmd("HGET", node.keys.stateH(txId), "processingState")), "sleeping"::equals);
  }
}
