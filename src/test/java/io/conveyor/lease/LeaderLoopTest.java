package io.conveyor.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.redis.LeaderRole;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableTicker;
import io.conveyor.testing.ScriptHarness;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The loop every leader role runs: one round at a time, and a leader's renewal at least every third of its lease. */
class LeaderLoopTest {
  private final ScriptHarness h = new ScriptHarness();
  private final MutableTicker ticker = new MutableTicker(0);
  private final Context context = h.vertx.getOrCreateContext();
  private final List<Promise<Long>> rounds = new CopyOnWriteArrayList<>();
  private LeaderLoop loop;

  @AfterEach
  void close() {
    on(() -> {
      loop.stop();
      return null;
    });
    h.close();
  }

  /** Runs on the loop's context, as a role does, and waits for it. */
  private <T> T on(Supplier<T> action) {
    Promise<T> done = Promise.promise();
    context.runOnContext(v -> done.complete(action.get()));
    return done.future().await();
  }

  private void start(Duration lease, Supplier<Future<Long>> round) {
    LeaderLoop.Seat seat = new LeaderLoop.Seat(LeaderRole.ARCHIVE, 0, "node-a",
        new Assignment("node-a", 1, Duration.ofSeconds(5), ticker), ticker);
    on(() -> loop = new LeaderLoop(h.vertx, h.store.context, seat, "archiving", lease, round));
  }

  @Test
  void a_tick_asked_for_during_a_round_runs_once_right_after_it_never_beside_it() {
    start(Duration.ofHours(1), () -> {
      Promise<Long> p = Promise.promise();
      rounds.add(p);
      return p.future();
    });
    on(() -> {
      loop.tick();
      loop.tick();
      loop.tick();
      return null;
    });
    assertEquals(1, rounds.size(), "the ticks asked for during the round wait for it");
    on(() -> rounds.get(0).tryComplete(LeaderLoop.NO_TIMER));
    assertEquals(2, rounds.size(), "the ticks asked for meanwhile make one round, right after");
    assertTrue(on(() -> loop.running()), "and it is under way");
  }

  @Test
  void a_leader_renews_at_least_every_third_of_its_lease_whatever_its_round_asks_for() {
    start(Duration.ofMillis(300), () -> {
      rounds.add(Promise.promise());
      loop.update(true, loop.asking()); // the round's call renewed the lease (the ticker stands still: it lasts)
      return Future.succeededFuture(Duration.ofHours(1).toMillis());
    });
    on(() -> {
      loop.tick();
      return null;
    });
    Eventually.until(Duration.ofSeconds(10), "three rounds, an hour asked for after each", rounds::size, n -> n >= 3);
  }
}
