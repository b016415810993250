package io.conveyor.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.config.Config;
import io.conveyor.redis.MemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class MemoryMarksTest {
  private static final long MB = 1 << 20;

  private static MemoryMarks marks(long budget) {
    return new MemoryMarks(new Config.RedisMemory(0.85, 0.75, budget, Duration.ofSeconds(1)));
  }

  @Test
  void the_limit_is_the_budget_or_maxmemory_the_lower_of_both_and_none_without_either() {
    assertEquals(64 * MB, marks(0).limit(new MemoryStore.Reading(10 * MB, 64 * MB)));
    assertEquals(32 * MB, marks(32 * MB).limit(new MemoryStore.Reading(10 * MB, 64 * MB)));
    assertEquals(64 * MB, marks(128 * MB).limit(new MemoryStore.Reading(10 * MB, 64 * MB)));
    assertEquals(32 * MB, marks(32 * MB).limit(new MemoryStore.Reading(10 * MB, 0)));
    assertEquals(0, marks(0).limit(new MemoryStore.Reading(10 * MB, 0)));
  }

  @Test
  void a_partition_turns_full_at_the_high_mark_and_back_only_below_the_low_one() {
    MemoryMarks m = marks(0);
    assertFalse(m.full(false, 84, 100));
    assertTrue(m.full(false, 85, 100));
    assertTrue(m.full(true, 80, 100), "between the marks it stays full");
    assertTrue(m.full(true, 75, 100));
    assertFalse(m.full(true, 74, 100));
    assertFalse(m.full(false, 80, 100), "between the marks it stays open");
  }

  @Test
  void without_a_limit_nothing_is_ever_full() {
    assertFalse(marks(0).full(false, Long.MAX_VALUE, 0));
    assertFalse(marks(0).full(true, Long.MAX_VALUE, 0));
  }
}
