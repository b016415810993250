package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fair share under load, on one node with 200 workers: a flood of one owner on a 50 ms pipeline (util/delay),
 * then a hundred of another once a tenth of the flood has run, which finish while most of the flood still waits;
 * and ten owners of different weights on a 5 ms pipeline, each taking its weight's share of the work while all
 * have a backlog.
 * -Dfair.flood=50000 for the figure; -Dfair.share=0 for the same without fair share.
 */
class FairShareIT {
  private static final Logger log = LoggerFactory.getLogger(FairShareIT.class);
  private static final int FLOOD = Integer.getInteger("fair.flood", 10_000);
  private static final String WORK = work("5ms");
  /**
   * The flood's: 200 workers run at most 4,000 a second, so the flood still waits when the late ones come
   * (with 5 ms a fast node ran all 10,000 in the second the test waited before them).
   */
  private static final String SLOW_WORK = work("50ms");

  private static String work(String delay) {
    return "{'name':'work','nodeGroup':'master','transactionType':true,'steps':["
        + "{'type':'util/delay','params':{'duration':'" + delay + "'}},{'type':'test/record'}]}";
  }

  private static List<Future<TxSummary>> startMany(TestNode node, String owner, int n) {
    List<Future<TxSummary>> all = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      all.add(node.transactions.start(new JsonObject().put("type", "work").put("owner", owner)
          .put("input", new JsonObject().put("i", i))));
    }
    return all;
  }

  @Test
  @Timeout(300)
  void a_hundred_started_after_a_flood_finish_while_the_flood_still_waits() {
    TestSteps steps = new TestSteps();
    Map<String, String> ownerOf = new ConcurrentHashMap<>();
    // -Dfair.share=0 shows the same run in arrival order (the late hundred's assertion then fails)
    try (TestNode node = new TestNode().set("NODE_WORKERS", "200")
        .set("TRANSACTIONS_OWNER_SHARE", System.getProperty("fair.share", "100")).pipeline("work", SLOW_WORK)
        .start(steps.registry())) {
      long t0 = System.currentTimeMillis();
      List<Future<TxSummary>> flood = startMany(node, "flood", FLOOD);
      Future.all(flood).await();
      flood.forEach(f -> ownerOf.put(f.result().txId(), "flood"));
      long floodStarted = System.currentTimeMillis();
      Eventually.until(Duration.ofSeconds(30), "a tenth of the flood to run", () -> steps.recorded.size(),
          n -> n >= FLOOD / 10);
      int floodDoneBefore = steps.recorded.size();
      assertTrue(floodDoneBefore <= FLOOD / 2, "the flood must still wait when the late ones start, but "
          + floodDoneBefore + " of " + FLOOD + " had run");
      List<Future<TxSummary>> late = startMany(node, "late", 100);
      Future.all(late).await();
      List<String> lateIds = late.stream().map(f -> f.result().txId()).toList();
      lateIds.forEach(id -> ownerOf.put(id, "late"));
      List<TxSummary> lateDone = new ArrayList<>();
      for (String id : lateIds) {
        lateDone.add(node.awaitFinal(id));
      }
      // the runs in the order they ran: how many of the flood's ran before the late owner's last one
      List<io.vertx.core.json.JsonObject> ran = List.copyOf(steps.recorded);
      int lastLate = 0;
      for (int i = 0; i < ran.size(); i++) {
        if ("late".equals(ownerOf.get(ran.get(i).getString("txId")))) {
          lastLate = i;
        }
      }
      long floodDoneWhenLateDone = ran.subList(0, lastLate).stream()
          .filter(r -> !"late".equals(ownerOf.get(r.getString("txId")))).count();
      long[] waits = lateDone.stream().mapToLong(s -> s.completed().toEpochMilli() - s.created().toEpochMilli())
          .sorted().toArray();
      Eventually.until(Duration.ofSeconds(240), "the flood to finish", () -> steps.recorded.size(),
          n -> n >= FLOOD + 100);
      long t1 = System.currentTimeMillis();
      log.info("fair share: flood of {} (started in {} ms); 100 late ones started at +{} ms with {} of the flood "
          + "done; the late ones' start-to-end p50 {} ms, p99 {} ms, max {} ms; {} of the flood ran before the "
          + "last late one; everything done in {} ms ({} tx/s)", FLOOD, floodStarted - t0,
          lateDone.get(0).created().toEpochMilli() - t0, floodDoneBefore, waits[49], waits[98], waits[99],
          floodDoneWhenLateDone, t1 - t0, (FLOOD + 100) * 1000L / (t1 - t0));
      lateDone.forEach(s -> assertEquals(TxStatus.SUCCESS, s.status()));
      // the late owner did not wait behind the flood: all hundred ran before half of the flood's backlog (what
      // was left of it when they started) did
      long backlog = FLOOD - floodDoneBefore;
      assertTrue(floodDoneWhenLateDone - floodDoneBefore < backlog / 2, (floodDoneWhenLateDone - floodDoneBefore)
          + " of the flood's backlog of " + backlog + " ran before the late owner's last one");
    }
  }

  @Test
  @Timeout(300)
  void ten_owners_of_different_weights_each_take_their_weights_share() {
    TestSteps steps = new TestSteps();
    Map<String, String> ownerOf = new ConcurrentHashMap<>();
    int[] weights = {1, 1, 1, 2, 2, 2, 3, 3, 4, 5};
    StringBuilder w = new StringBuilder();
    for (int i = 0; i < weights.length; i++) {
      w.append(i == 0 ? "" : ",").append("o").append(i).append('=').append(weights[i]);
    }
    try (TestNode node = new TestNode().set("NODE_WORKERS", "200").set("TRANSACTIONS_OWNER_SHARE", "20")
        .set("TRANSACTIONS_OWNER_WEIGHTS", w.toString()).pipeline("work", WORK).start(steps.registry())) {
      node.transactions.group("master", "pause", "test").await();
      for (int i = 0; i < weights.length; i++) {
        String owner = "o" + i;
        List<Future<TxSummary>> all = startMany(node, owner, 1500 * weights[i]);
        Future.all(all).await();
        all.forEach(f -> ownerOf.put(f.result().txId(), owner));
      }
      AtomicLong resumed = new AtomicLong(System.currentTimeMillis());
      node.transactions.group("master", "resume", "test").await();
      // every owner still has work until the first 12,000 (of 36,000) are done: count their shares there. The
      // in-queue holds one round of turns (TRANSACTIONS_OWNER_SHARE x weight each, 480), refilled in the order
      // places free (lib/queue.lua), so what is taken holds every owner's exact share of each 480; 200 run at once
      // and may end out of order, so at the cut an owner may be up to a turn ahead or behind, within 4 % of the
      // smallest share (500) at 12,000. While the refill went owner by owner, o1 came out +8 to +12 % and o8, o9
      // -3 to -5 % in every run (docs/decisions.md)
      int window = 12_000;
      Eventually.until(Duration.ofSeconds(180), window + " done", () -> steps.recorded.size(), n -> n >= window);
      Map<String, Long> done = new java.util.TreeMap<>();
      // a copy: steps go on being recorded, and a view of a CopyOnWriteArrayList fails once the list changes
      List.copyOf(steps.recorded).subList(0, window).forEach(r -> done.merge(ownerOf.get(r.getString("txId")), 1L, Long::sum));
      int total = java.util.Arrays.stream(weights).sum();
      StringBuilder report = new StringBuilder();
      for (int i = 0; i < weights.length; i++) {
        double expected = window * (double) weights[i] / total;
        long got = done.getOrDefault("o" + i, 0L);
        report.append(String.format(" o%d (weight %d): %d, expected %.0f (%+.1f%%);", i, weights[i], got, expected,
            (got - expected) * 100 / expected));
      }
      log.info("fair share by weight, first {} done in {} ms:{}", window, System.currentTimeMillis() - resumed.get(),
          report);
      for (int i = 0; i < weights.length; i++) {
        double expected = window * (double) weights[i] / total;
        long got = done.getOrDefault("o" + i, 0L);
        assertTrue(Math.abs(got - expected) <= expected * 0.10, "owner o" + i + ":" + report);
      }
    }
  }
}
