package io.conveyor.node;

import io.conveyor.config.Config;
import io.conveyor.redis.MemoryStore;

/**
 * The memory guard's arithmetic: what a reading is measured against, and when a partition turns full or back.
 * Between the marks a partition keeps its state (hysteresis), so starts do not flap at one mark.
 */
final class MemoryMarks {
  private final Config.RedisMemory settings;

  MemoryMarks(Config.RedisMemory settings) {
    this.settings = settings;
  }

  /** The limit a reading is judged against: the budget, or maxmemory, the lower of them when both; 0: none. */
  long limit(MemoryStore.Reading r) {
    long budget = settings.budget();
    if (budget > 0 && r.max() > 0) {
      return Math.min(budget, r.max());
    }
    return budget > 0 ? budget : r.max();
  }

  /** Full after this reading: at or above the high-water mark, or still at or above the low one when it was. */
  boolean full(boolean wasFull, long used, long limit) {
    if (limit == 0) {
      return false;
    }
    double ratio = (double) used / limit;
    return ratio >= (wasFull ? settings.lowWater() : settings.highWater());
  }
}
