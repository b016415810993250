package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BatcherTest {
  private final List<List<Integer>> calls = new ArrayList<>();
  private final List<Promise<List<String>>> pending = new ArrayList<>();
  private final Batcher<Integer, String> batcher = new Batcher<>(3, items -> {
    calls.add(items);
    Promise<List<String>> p = Promise.promise();
    pending.add(p);
    return p.future();
  });

  private void answer(int call) {
    pending.get(call).complete(calls.get(call).stream().map(i -> "r" + i).toList());
  }

  @Test
  void a_lone_item_goes_at_once_and_items_added_while_it_is_out_leave_together_up_to_the_max() {
    Future<String> first = batcher.add(1);
    List<Future<String>> later = new ArrayList<>();
    for (int i = 2; i <= 6; i++) {
      later.add(batcher.add(i));
    }
    assertEquals(List.of(List.of(1)), calls);
    answer(0);
    assertEquals("r1", first.result());
    assertEquals(List.of(2, 3, 4), calls.get(1));
    answer(1);
    assertEquals(List.of(5, 6), calls.get(2));
    answer(2);
    assertEquals(List.of("r2", "r3", "r4", "r5", "r6"), later.stream().map(Future::result).toList());
  }

  @Test
  void a_failed_call_fails_every_item_in_it_and_the_next_batch_still_goes() {
    Future<String> first = batcher.add(1);
    Future<String> second = batcher.add(2);
    pending.get(0).fail(new IllegalStateException("redis down"));
    assertEquals("redis down", first.cause().getMessage());
    answer(1);
    assertEquals("r2", second.result());
  }
}
