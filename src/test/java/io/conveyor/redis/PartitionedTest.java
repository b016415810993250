package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A batch split by partition answers each item on its own: one partition's failure or silence is its own. */
class PartitionedTest {
  private final Keys keys = new Keys("t:", 3);
  private final Map<Integer, Promise<List<String>>> calls = new HashMap<>();
  private final Map<Integer, List<String>> given = new HashMap<>();

  private List<Future<String>> each(List<String> txIds) {
    return Partitioned.each(keys, txIds, id -> id, (p, some) -> {
      given.put(p, some);
      Promise<List<String>> call = Promise.promise();
      calls.put(p, call);
      return call.future();
    });
  }

  private void answer(int p) {
    calls.get(p).complete(given.get(p).stream().map(id -> "done " + id).toList());
  }

  @Test
  void items_of_a_failed_partition_fail_with_its_error_and_the_others_succeed_in_the_batch_order() {
    List<String> ids = List.of(keys.newTxId(0), keys.newTxId(1), keys.newTxId(2), keys.newTxId(1), keys.newTxId(0));
    List<Future<String>> out = each(ids);
    assertEquals(List.of(ids.get(0), ids.get(4)), given.get(0));
    calls.get(1).fail(new RedisUnavailable(new IllegalStateException("partition 1 down")));
    answer(0);
    answer(2);
    assertEquals("done " + ids.get(0), out.get(0).result());
    assertEquals("done " + ids.get(2), out.get(2).result());
    assertEquals("done " + ids.get(4), out.get(4).result());
    assertTrue(out.get(1).cause().getMessage().contains("partition 1 down"));
    assertTrue(out.get(3).cause().getMessage().contains("partition 1 down"));
  }

  @Test
  void a_partition_that_never_answers_does_not_hold_the_answers_of_the_others() {
    List<String> ids = List.of(keys.newTxId(1), keys.newTxId(0));
    List<Future<String>> out = each(ids);
    answer(0); // partition 1's call stays out
    assertEquals("done " + ids.get(1), out.get(1).result());
    assertFalse(out.get(0).isComplete());
  }

  @Test
  void a_call_that_throws_fails_only_its_own_partitions_items() {
    List<String> ids = List.of(keys.newTxId(0), keys.newTxId(2));
    List<Future<String>> out = Partitioned.each(keys, ids, id -> id, (p, some) -> {
      if (p == 2) {
        throw new IllegalArgumentException("bad item in 2");
      }
      return Future.succeededFuture(new ArrayList<>(some));
    });
    assertEquals(ids.get(0), out.get(0).result());
    assertEquals("bad item in 2", out.get(1).cause().getMessage());
  }

  @Test
  void all_of_them_together_fails_with_the_first_failure() {
    List<String> ids = List.of(keys.newTxId(0), keys.newTxId(1));
    Future<List<String>> whole = Partitioned.all(each(ids));
    answer(0);
    calls.get(1).fail(new IllegalStateException("no"));
    assertEquals("no", whole.cause().getMessage());
  }
}
