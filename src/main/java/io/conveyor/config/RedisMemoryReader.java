package io.conveyor.config;

import java.time.Duration;

/** The memory guard's settings of the redis section: two fractions, a byte count and a period, checked together. */
final class RedisMemoryReader {
  private RedisMemoryReader() {
  }

  static Config.RedisMemory read(ConfigReader r) {
    double high = fraction(r, "redis.memoryHighWater");
    double low = fraction(r, "redis.memoryLowWater");
    if (low >= high) {
      throw r.bad("redis.memoryLowWater", "a fraction below redis.memoryHighWater (" + high + "), so starts "
          + "resume only once memory fell clearly below where they stopped");
    }
    return new Config.RedisMemory(high, low, bytes(r, "redis.memoryBudget"),
        r.duration("redis.memoryCheckInterval", Duration.ofMillis(10)));
  }

  /** A fraction of the limit, above 0 and at most 1 (0.85 is 85 %). */
  private static double fraction(ConfigReader r, String path) {
    Object v = r.raw(path);
    double f;
    try {
      f = v instanceof Number n ? n.doubleValue() : Double.parseDouble(String.valueOf(v).trim());
    } catch (NumberFormatException e) {
      f = Double.NaN;
    }
    if (!(f > 0 && f <= 1)) {
      throw r.bad(path, "a fraction of the memory limit above 0 and at most 1, e.g. 0.85 for 85 %");
    }
    return f;
  }

  /** A byte count: 0 (none) or at least 1 MiB. */
  private static long bytes(ConfigReader r, String path) {
    Object v = r.raw(path);
    try {
      long n = v instanceof Number num && num.doubleValue() == num.longValue() ? num.longValue()
          : Long.parseLong(String.valueOf(v).trim());
      if (n == 0 || n >= 1 << 20) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw r.bad(path, "a number of bytes: 0 (use the server's maxmemory) or at least 1048576 (1 MiB)");
  }
}
