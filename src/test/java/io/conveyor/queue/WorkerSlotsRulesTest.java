package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.Dequeued;
import io.conveyor.redis.QueueStore.Running;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The worker slots' arithmetic: what a take may ask for, what a start may reserve, and when a drain may end. */
class WorkerSlotsRulesTest {
  private final WorkerSlots slots = new WorkerSlots(4);

  private static Dequeued tx(String id) {
    return Dequeued.unreadable(id, 1, "test");
  }

  @Test
  void a_take_asks_for_the_slots_neither_running_nor_reserved_and_holds_them_until_it_answers() {
    assertEquals(1, slots.reserve(1));
    assertEquals(3, slots.ask());
    assertTrue(slots.full(), "what the take asked for is not free for a start");
    assertEquals(0, slots.reserve(1));

    slots.taken(2);
    assertFalse(slots.full());
    assertEquals(3, slots.busy() + slots.reserved(), "two running, one reserved");
  }

  @Test
  void a_slot_frees_when_its_completion_is_sent_but_no_more_than_workers_writes_are_out() {
    slots.taken(4);
    slots.running(List.of(tx("a"), tx("b"), tx("c"), tx("d")));
    for (int i = 0; i < 4; i++) {
      slots.ended();
    }
    assertEquals(0, slots.runs());
    assertEquals(4, slots.busy(), "four completions out");
    assertTrue(slots.full(), "as many writes out as workers: nothing more is taken until one lands");
    assertEquals(0, slots.reserve(2));

    slots.released(tx("a"), true);
    assertEquals(1, slots.ask(), "one write landed: one slot");
  }

  @Test
  void a_transaction_run_twice_here_stays_running_until_both_runs_end() {
    slots.taken(2);
    slots.running(List.of(tx("a")));
    slots.running(List.of(tx("a")));
    slots.released(tx("a"), false);
    assertEquals(Set.of(new Running("a", 1)), slots.running());
    slots.released(tx("a"), false);
    assertEquals(Set.of(), slots.running());
  }

  @Test
  void runs_of_two_attempts_of_one_transaction_are_told_apart() {
    Dequeued old = Dequeued.unreadable("a", 1, "test");
    Dequeued later = Dequeued.unreadable("a", 3, "test");
    slots.taken(2);
    slots.running(List.of(old));
    slots.running(List.of(later));
    assertEquals(Set.of(new Running("a", 1), new Running("a", 3)), slots.running());
    slots.released(old, false);
    assertEquals(Set.of(new Running("a", 3)), slots.running(), "the later run is still under way");
  }

  @Test
  void a_drain_may_end_only_when_nothing_runs_writes_or_is_reserved() {
    slots.taken(1);
    slots.running(List.of(tx("a")));
    assertEquals(2, slots.reserve(2));
    slots.ended();
    assertFalse(slots.idle(), "a write is out and two slots are reserved");
    slots.released(tx("a"), true);
    assertFalse(slots.idle(), "two slots are reserved by a start call");
    slots.unreserve(2, 0);
    assertTrue(slots.idle());
  }

  @Test
  void takes_in_several_partitions_each_ask_a_share_so_one_that_hangs_holds_back_only_its_own() {
    assertEquals(2, slots.ask(3), "a third of four, rounded up");
    assertEquals(1, slots.ask(2), "half of the two left");
    assertEquals(1, slots.ask(1));
    assertTrue(slots.full());
    slots.taken(1, 1); // the second answered; the first still hangs
    assertEquals(0, slots.ask(1), "three asked or running of four");
    slots.taken(1, 0);
    assertEquals(1, slots.ask(1), "the hanging take's two stay held, no more");
  }
}
