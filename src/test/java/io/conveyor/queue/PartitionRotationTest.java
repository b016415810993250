package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which partition a take looks into: hot ones in turn, a ring during a take keeps one hot, a sweep when idle. */
class PartitionRotationTest {

  private static List<Integer> next(PartitionRotation r, int n) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(r.next());
    }
    return out;
  }

  @Test
  void with_one_partition_every_take_goes_there() {
    assertEquals(List.of(0, 0, 0), next(new PartitionRotation(1, 0), 3));
  }

  @Test
  void hot_partitions_take_turns_oldest_first() {
    PartitionRotation r = new PartitionRotation(3, 0);
    r.rang(2);
    r.rang(0);
    r.rang(2); // already hot: keeps its place
    assertEquals(List.of(2, 0, 2, 0), next(r, 4));
  }

  @Test
  void a_partition_found_empty_goes_cold_unless_a_ring_came_while_the_take_was_out() {
    PartitionRotation r = new PartitionRotation(3, 0);
    r.rang(1);
    r.rang(2);
    int p = r.next();
    long before = r.ringsHeard(p);
    r.rang(p); // the ring for work queued after the dequeue ran there came before its empty reply
    r.emptied(p, before);
    int q = r.next();
    r.emptied(q, r.ringsHeard(q));
    assertEquals(List.of(1, 1), next(r, 2), "1 stays hot; 2 went cold");
  }

  @Test
  void with_nothing_hot_a_node_waits_and_after_idle_waits_sweeps_one_partition_in_turn() {
    PartitionRotation r = new PartitionRotation(3, 1);
    assertEquals(PartitionRotation.NONE, r.next());
    List<Integer> swept = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      r.sweepDue();
      swept.add(r.next());
      assertEquals(PartitionRotation.NONE, r.next(), "one look per sweep");
    }
    assertEquals(List.of(1, 2, 0, 1), swept);
  }

  @Test
  void after_a_subscription_every_partition_is_hot() {
    PartitionRotation r = new PartitionRotation(3, 0);
    r.allHot();
    assertEquals(List.of(0, 1, 2), next(r, 3));
  }

  @Test
  void a_partition_whose_take_is_out_is_passed_over_so_the_others_take_meanwhile() {
    PartitionRotation r = new PartitionRotation(3, 0);
    r.rang(1);
    r.rang(0);
    r.rang(2);
    assertEquals(0, r.next(p -> p == 1)); // 1 is oldest, but its take hangs
    assertEquals(2, r.next(p -> p == 1));
    assertEquals(PartitionRotation.NONE, r.next(p -> true));
    assertEquals(PartitionRotation.NONE, new PartitionRotation(1, 0).next(p -> p == 0));
  }
}
