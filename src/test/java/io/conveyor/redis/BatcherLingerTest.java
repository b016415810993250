package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** redis.linger: an item that finds no call out waits on its context's timer for others to join it. */
@ExtendWith(VertxExtension.class)
class BatcherLingerTest {
  private static final long LINGER_MS = 20;
  private final List<List<Integer>> calls = new ArrayList<>();
  private final List<Promise<List<String>>> pending = new ArrayList<>();
  private final Batcher<Integer, String> batcher = Batcher.perItem(3, items -> {
    calls.add(items);
    Promise<List<String>> p = Promise.promise();
    pending.add(p);
    return Partitioned.spread(p.future(), items.size());
  }, LINGER_MS);

  private void answer(int call) {
    pending.get(call).complete(calls.get(call).stream().map(i -> "r" + i).toList());
  }

  @Test
  void items_that_find_no_call_out_wait_for_the_linger_and_leave_in_one_call(Vertx vertx, VertxTestContext test) {
    vertx.runOnContext(v -> {
      Future<String> one = batcher.add(1);
      Future<String> two = batcher.add(2);
      test.verify(() -> assertEquals(List.of(), calls, "nothing goes before the linger is up"));
      vertx.setTimer(LINGER_MS * 2, t -> test.verify(() -> {
        assertEquals(List.of(List.of(1, 2)), calls);
        answer(0);
        assertEquals(List.of("r1", "r2"), List.of(one.result(), two.result()));
        test.completeNow();
      }));
    });
  }

  @Test
  void a_batch_full_before_its_linger_is_up_goes_at_once_and_its_timer_sends_nothing(Vertx vertx,
                                                                                        VertxTestContext test) {
    vertx.runOnContext(v -> {
      for (int i = 1; i <= 4; i++) {
        batcher.add(i);
      }
      test.verify(() -> assertEquals(List.of(List.of(1, 2, 3)), calls, "the full batch went without waiting"));
      // a timer due after the linger's runs after it on this event loop: by then the linger's has sent nothing
      vertx.setTimer(LINGER_MS * 2, t -> test.verify(() -> {
        assertEquals(1, calls.size(), "the cancelled linger sent " + calls);
        answer(0);
        // what waited while the call was out goes when it returns, without a linger of its own
        assertEquals(List.of(List.of(1, 2, 3), List.of(4)), calls);
        test.completeNow();
      }));
    });
  }

  @Test
  void off_a_vertx_context_an_item_goes_at_once() {
    assertTrue(io.vertx.core.Vertx.currentContext() == null);
    batcher.add(7);
    assertEquals(List.of(List.of(7)), calls);
  }
}
