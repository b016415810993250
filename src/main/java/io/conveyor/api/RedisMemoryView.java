package io.conveyor.api;

import io.conveyor.bus.MemoryJudged;
import io.conveyor.config.Config;

/** How /health/ready words the memory guard's verdict: "ok", or what is full, how full, and what it means. */
final class RedisMemoryView {
  private RedisMemoryView() {
  }

  static String readiness(MemoryJudged judged, Config.RedisMemory settings) {
    MemoryJudged.Partition p = judged.fullest();
    if (p == null) {
      return "ok";
    }
    return "full: partition " + p.partition() + " at " + Math.round(p.ratio() * 100) + " % of " + p.limit()
        + " bytes (redis.memoryHighWater " + Math.round(settings.highWater() * 100) + " %); new starts get 503 "
        + "redis-memory until it is below redis.memoryLowWater (" + Math.round(settings.lowWater() * 100)
        + " %); reads, cancels and running transactions go on";
  }
}
