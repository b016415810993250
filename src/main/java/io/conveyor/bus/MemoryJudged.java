package io.conveyor.bus;

import java.util.List;

/**
 * Fact, local only: the memory watcher's last verdict on each partition's Redis (Addresses.REDIS_MEMORY_JUDGED),
 * published after every check. used and limit in bytes (limit 0: no guard); full from the high-water mark until
 * memory is below the low-water mark again.
 */
public record MemoryJudged(List<Partition> partitions) {
  /** Before the first check, or with no guard: nothing is full. */
  public static final MemoryJudged NONE = new MemoryJudged(List.of());

  public record Partition(int partition, long used, long limit, boolean full) {
    public double ratio() {
      return limit == 0 ? 0 : (double) used / limit;
    }
  }

  /** Partition p as last judged, or null when it was not (no guard, or not yet). */
  public Partition of(int p) {
    return partitions.stream().filter(x -> x.partition() == p).findFirst().orElse(null);
  }

  /** Whether every partition judged is full (a start, wherever it lands, would be refused). */
  public boolean allFull() {
    return !partitions.isEmpty() && partitions.stream().allMatch(Partition::full);
  }

  /** The fullest partition judged full, or null when none is. */
  public Partition fullest() {
    return partitions.stream().filter(Partition::full)
        .max(java.util.Comparator.comparingDouble(Partition::ratio)).orElse(null);
  }
}
