package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Fair share across owners in a group: each owner has at most transactions.ownerShare (times its weight) of
 * its starts in the group's in-queue; the rest wait in its own queue and move up as its others are taken.
 * One worker runs the transactions one by one, so the order they ran in is the order they were taken.
 */
class FairShareTest {
  private static final String ONE = "{'name':'one','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'test/record'}]}";
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  @AfterEach
  void stop() {
    node.close();
  }

  private TestNode start(String share, String weights) {
    return start(share, weights, java.time.Clock.systemUTC());
  }

  private TestNode start(String share, String weights, java.time.Clock clock) {
    // fair share holds within each partition's queue of a group: one partition, so one queue's order is all
    // (on a Redis Cluster, one partition takes a hash-tag prefix)
    node = TestNode.withPrefix("{" + io.conveyor.testing.TestRedis.newPrefix().replace(":", "") + "}:")
        .set("REDIS_PARTITIONS", "1").set("NODE_WORKERS", "1").set("TRANSACTIONS_OWNER_SHARE", share)
        .set("TRANSACTIONS_OWNER_WEIGHTS", weights).pipeline("one", ONE).clock(clock).start(steps.registry());
    return node;
  }

  /** Starts n of the owner's at once (one batch), in order. */
  private List<String> startAll(String owner, int n) {
    List<io.vertx.core.Future<io.conveyor.model.TxSummary>> started = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      started.add(node.transactions.start(new JsonObject().put("type", "one").put("owner", owner)
          .put("input", new JsonObject().put("i", i))));
    }
    io.vertx.core.Future.all(started).await();
    return started.stream().map(f -> f.result().txId()).toList();
  }

  /** Owners in the order their transactions ran, once all n have run. */
  private List<String> runOrder(Map<String, String> ownerOf, int n) {
    Eventually.until(Duration.ofSeconds(20), n + " runs", () -> steps.recorded.size(), s -> s >= n);
    return steps.recorded.stream().map(r -> ownerOf.get(r.getString("txId"))).toList();
  }

  private static int last(List<String> order, String owner) {
    return order.lastIndexOf(owner) + 1;
  }

  private void paused(Runnable starts) {
    node.transactions.group("master", "pause", "test").await();
    starts.run();
    node.transactions.group("master", "resume", "test").await();
  }

  @Test
  void a_later_owner_takes_turns_with_a_flood_instead_of_waiting_behind_it() {
    start("2", "");
    Map<String, String> ownerOf = new java.util.HashMap<>();
    paused(() -> {
      startAll("flood", 30).forEach(id -> ownerOf.put(id, "flood"));
      startAll("late", 5).forEach(id -> ownerOf.put(id, "late"));
      // two of each in the in-queue; the rest wait in their owners' queues
      assertEquals("31", cmd("HGET", node.keys.qFairH(0, "master"), "*").toString(), "28 + 3 waiting");
      // as an operator reads it (GET /api/v1/admin/groups/master)
      JsonObject owners = node.store.control.waiting("master").await().getJsonObject("owners");
      assertEquals(new JsonObject().put("admitted", 2L).put("waiting", 28L), owners.getJsonObject("flood"));
      assertEquals(new JsonObject().put("admitted", 2L).put("waiting", 3L), owners.getJsonObject("late"));
    });
    List<String> order = runOrder(ownerOf, 35);
    // a1 a2 l1 l2 a3 a4 l3 l4 a5 a6 l5: the late owner's five ran by the 11th, not after the flood's 30
    assertTrue(last(order, "late") <= 12, "the late owner's last ran " + last(order, "late") + "th: " + order);
    assertFairStateEmpty("flood", "late");
  }

  @Test
  void without_fair_share_the_later_owner_waits_behind_the_whole_flood() {
    start("0", "");
    Map<String, String> ownerOf = new java.util.HashMap<>();
    paused(() -> {
      startAll("flood", 30).forEach(id -> ownerOf.put(id, "flood"));
      startAll("late", 5).forEach(id -> ownerOf.put(id, "late"));
    });
    List<String> order = runOrder(ownerOf, 35);
    assertEquals(35, last(order, "late"), "arrival order: " + order);
    assertEquals(0L, (long) cmd("EXISTS", node.keys.qFairH(0, "master")).toInteger());
  }

  @Test
  void weights_share_the_workers_in_proportion_while_both_have_work() {
    // a clock that stands still: every start and every move up happens in the same millisecond, as on a fast
    // machine, and ties in the in-queue must still go by arrival, not by txId
    start("1", "heavy=3", java.time.Clock.fixed(java.time.Instant.now(), java.time.ZoneOffset.UTC));
    Map<String, String> ownerOf = new java.util.HashMap<>();
    paused(() -> {
      startAll("heavy", 40).forEach(id -> ownerOf.put(id, "heavy"));
      startAll("light", 40).forEach(id -> ownerOf.put(id, "light"));
    });
    List<String> first40 = runOrder(ownerOf, 80).subList(0, 40);
    long heavy = first40.stream().filter("heavy"::equals).count();
    // weight 3 against 1: three of every four while both wait
    assertEquals(30, heavy, heavy + " of the first 40 were heavy's: " + first40);
    assertFairStateEmpty("heavy", "light");
  }

  @Test
  void a_weight_set_through_the_admin_store_replaces_the_configured_one_for_the_next_starts() {
    start("2", "heavy=3");
    node.store.owners.put("heavy", new io.conveyor.redis.OwnerStore.Limits(5, null, null, 0)).await();
    node.store.owners.put("light", new io.conveyor.redis.OwnerStore.Limits(2, null, null, 0)).await();
    paused(() -> {
      startAll("heavy", 20);
      startAll("light", 20);
      startAll("plain", 20);
      JsonObject owners = node.store.control.waiting("master").await().getJsonObject("owners");
      // ownerShare 2 x weight: 10 (5 from the store, not 3 from the config), 4, and 2 (no weight anywhere)
      assertEquals(new JsonObject().put("admitted", 10L).put("waiting", 10L), owners.getJsonObject("heavy"));
      assertEquals(new JsonObject().put("admitted", 4L).put("waiting", 16L), owners.getJsonObject("light"));
      assertEquals(new JsonObject().put("admitted", 2L).put("waiting", 18L), owners.getJsonObject("plain"));
    });
    runOrder(java.util.Map.of(), 60);
    assertFairStateEmpty("heavy", "light", "plain");
  }

  @Test
  void a_cancelled_start_leaves_its_place_and_the_counts_stay_true() {
    start("2", "");
    Map<String, String> ownerOf = new java.util.HashMap<>();
    List<String> ids = new ArrayList<>();
    paused(() -> {
      ids.addAll(startAll("flood", 6));
      ids.forEach(id -> ownerOf.put(id, "flood"));
      // one admitted, one waiting
      assertEquals(TxStatus.CANCELLED, node.transactions.cancel(ids.get(0), "flood").await().status());
      assertEquals(TxStatus.CANCELLED, node.transactions.cancel(ids.get(4), "flood").await().status());
      assertEquals("2", cmd("HGET", node.keys.qFairH(0, "master"), "flood").toString(), "the third moved up");
      assertEquals("2", cmd("HGET", node.keys.qFairH(0, "master"), "*").toString());
    });
    List<String> order = runOrder(ownerOf, 4);
    assertEquals(4, order.size());
    assertFairStateEmpty("flood");
    for (String id : List.of(ids.get(1), ids.get(2), ids.get(3), ids.get(5))) {
      assertEquals(TxStatus.SUCCESS, node.awaitFinal(id).status());
    }
  }

  private void assertFairStateEmpty(String... owners) {
    Eventually.until(Duration.ofSeconds(5), "the fair-share counts to empty",
        () -> cmd("EXISTS", node.keys.qFairH(0, "master")).toInteger(), n -> n == 0); // each field goes at 0
    for (String owner : owners) {
      assertEquals(0L, (long) cmd("ZCARD", node.keys.qOwnerZ(0, "master", owner)).toInteger(), owner);
    }
  }

}
