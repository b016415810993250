package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A key without the admin role gets at most PER_MINUTE refusals recorded a minute; the rest are summed up once. */
class RefusalBudgetTest {
  @Test
  void past_the_limit_a_keys_refusals_are_not_recorded_and_its_next_minute_sums_them_up_once() {
    RefusalBudget budget = new RefusalBudget();
    long t0 = 1_800_000_000_000L;
    List<Boolean> recorded = new ArrayList<>();
    for (int i = 0; i < RefusalBudget.PER_MINUTE + 5; i++) {
      recorded.add(budget.take("tenant", t0 + i).recorded());
    }
    assertEquals(RefusalBudget.PER_MINUTE, recorded.stream().filter(r -> r).count());
    assertEquals(true, budget.take("other", t0 + 20).recorded(), "another key has its own budget");
    RefusalBudget.Taken next = budget.take("tenant", t0 + 60_000);
    assertEquals(new RefusalBudget.Taken(true, 5, t0), next);
    assertEquals(0, budget.take("tenant", t0 + 120_000).suppressedBefore(), "summed up once");
  }
}
