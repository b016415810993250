package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.Dequeued;
import io.conveyor.model.StartRequest;
import io.conveyor.testing.ScriptHarness;
import io.conveyor.testing.ScriptTest;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Fair share as the scripts decide it, on a hand-moved clock: what dequeue takes, in the order it takes it, with
 * the batch sizes a node with 200 workers asks for (all at first, then what frees).
 */
class FairShareScriptTest extends ScriptTest {
  private static final int SHARE = 20;
  private static final int[] WEIGHTS = {1, 1, 1, 2, 2, 2, 3, 3, 4, 5};
  /** Σ ownerShare × weight: the starts of all owners in the in-queue at once, one round of turns. */
  private static final int ROUND = SHARE * 24;
  private static final int ROUNDS = 12;
  private static final int[] FREED = {7, 13, 1, 31, 50, 3, 22, 9, 40, 17};

  /** Starts each owner's n in one call, owner after owner, a millisecond apart (as FairShareIT does). */
  private void startAll() {
    for (int o = 0; o < WEIGHTS.length; o++) {
      List<QueueStore.NewTx> txs = new ArrayList<>();
      for (int i = 0; i < (ROUNDS + 1) * SHARE * WEIGHTS[o]; i++) {
        txs.add(new QueueStore.NewTx(ScriptHarness.txId(0, String.format("o%d-%04d", o, i)),
            new StartRequest("work", "o" + o, null, new JsonObject(), new JsonObject()), "g", Duration.ZERO, null,
            SHARE * WEIGHTS[o]));
      }
      h.store.queue.start(txs, Duration.ofHours(1), 0, SHARE).await();
      h.clock.advance(Duration.ofMillis(1));
    }
  }

  /** The owners of the first n taken: 200 at first, then as workers free, a millisecond apart. */
  private List<String> taken(int n) {
    List<String> order = new ArrayList<>();
    for (int call = 0; order.size() < n; call++) {
      int max = call == 0 ? 200 : FREED[(call - 1) % FREED.length];
      h.store.queue.dequeue(0, "g", "node-a", max).await().forEach(d -> order.add(d.owner()));
      h.clock.advance(Duration.ofMillis(1));
    }
    return order.subList(0, n);
  }

  @Test
  void every_round_of_takes_holds_each_owners_weight_in_turns_whatever_the_batches() {
    h.pipeline("work", "v1", "g", true);
    startAll();
    List<String> order = taken(ROUNDS * ROUND);
    StringBuilder report = new StringBuilder();
    int worst = 0;
    for (int o = 0; o < WEIGHTS.length; o++) {
      String owner = "o" + o;
      long all = order.stream().filter(owner::equals).count();
      report.append(String.format(" %s %d/%d;", owner, all, ROUNDS * SHARE * WEIGHTS[o]));
      // any round-long window, wherever it begins, holds each owner's share within one turn
      for (int from = 0; from + ROUND <= order.size(); from++) {
        long got = order.subList(from, from + ROUND).stream().filter(owner::equals).count();
        worst = Math.max(worst, (int) Math.abs(got - SHARE * WEIGHTS[o]));
      }
    }
    System.out.println("fair share by weight, first " + order.size() + " taken:" + report + " worst round " + worst);
    assertTrue(worst <= SHARE, "an owner's count in a round-long window was off by " + worst + ":" + report);
    for (int o = 0; o < WEIGHTS.length; o++) {
      String owner = "o" + o;
      long all = order.stream().filter(owner::equals).count();
      assertTrue(Math.abs(all - ROUNDS * SHARE * WEIGHTS[o]) <= SHARE, owner + ":" + report);
    }
  }
}
