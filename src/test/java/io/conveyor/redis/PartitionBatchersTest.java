package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.conveyor.config.Config;
import io.conveyor.testing.MutableTicker;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One batcher per partition: a call that never answers holds only its own partition's items. */
class PartitionBatchersTest {
  private final Keys keys = new Keys("t:", 3);
  private final MutableTicker ticker = new MutableTicker(0);
  private final PartitionHealth health = new PartitionHealth(3, Config.PartitionHealth.DEFAULTS, ticker);
  /** Each call: the items given and the promise that answers them (by hand). */
  private final List<List<String>> calls = new ArrayList<>();
  private final List<Promise<List<String>>> pending = new ArrayList<>();
  private final PartitionBatchers<String, String> batchers = new PartitionBatchers<>(keys, id -> id, 2, items -> {
    calls.add(items);
    Promise<List<String>> p = Promise.promise();
    pending.add(p);
    return Partitioned.spread(p.future(), items.size());
  }, health, ticker);

  private void answer(int call) {
    pending.get(call).complete(calls.get(call).stream().map(i -> "ok " + i).toList());
  }

  @Test
  void a_call_for_partition_1_that_never_answers_does_not_hold_partition_0s_items() {
    String a1 = keys.newTxId(1);
    String b1 = keys.newTxId(1);
    String a0 = keys.newTxId(0);
    String b0 = keys.newTxId(0);
    String c0 = keys.newTxId(0);
    Future<String> first1 = batchers.add(a1);
    Future<String> second1 = batchers.add(b1); // waits behind partition 1's call
    Future<String> first0 = batchers.add(a0);
    Future<String> second0 = batchers.add(b0);
    Future<String> third0 = batchers.add(c0);
    assertEquals(List.of(List.of(a1), List.of(a0)), calls);
    answer(1);
    assertEquals("ok " + a0, first0.result());
    assertEquals(List.of(b0, c0), calls.get(2)); // partition 0's next batch went, partition 1's call still out
    answer(2);
    assertEquals("ok " + b0, second0.result());
    assertEquals("ok " + c0, third0.result());
    assertFalse(first1.isComplete());
    assertFalse(second1.isComplete());
    assertEquals(3, calls.size());
  }

  @Test
  void outcomes_feed_the_health_tracker_and_a_call_out_too_long_makes_its_partition_suspect() {
    batchers.add(keys.newTxId(1));
    batchers.add(keys.newTxId(2));
    ticker.advance(Duration.ofMillis(300));
    batchers.add(keys.newTxId(0)); // each add looks at the calls out
    assertEquals(PartitionHealth.State.SUSPECT, health.state(1));
    assertEquals(PartitionHealth.State.SUSPECT, health.state(2));
    assertEquals(PartitionHealth.State.OK, health.state(0));
    pending.get(0).fail(new RedisUnavailable(new IllegalStateException("master of partition 1 gone")));
    answer(1);
    assertEquals(PartitionHealth.State.FAILING, health.state(1));
    assertEquals(PartitionHealth.State.OK, health.state(2));
  }
}
