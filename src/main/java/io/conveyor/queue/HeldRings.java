package io.conveyor.queue;

import io.conveyor.redis.QueueStore;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Work held by a rate limit gets a token in some ms: the group is rung then, so an idle node (this one or
 * another) takes it at once rather than at the next start or idle wait. One ring per partition is set at a
 * time, the earliest. Kept by the dequeue verticle on its own context.
 */
final class HeldRings {
  private static final Logger log = LoggerFactory.getLogger(HeldRings.class);
  private final Vertx vertx;
  private final QueueStore store;
  private final Clock clock;
  private final String group;
  private final BooleanSupplier stopping;
  /** Per partition, when its ring is set to go (ms, the node's clock). */
  private final Map<Integer, Long> set = new HashMap<>();

  HeldRings(Vertx vertx, QueueStore store, Clock clock, String group, BooleanSupplier stopping) {
    this.vertx = vertx;
    this.store = store;
    this.clock = clock;
    this.group = group;
    this.stopping = stopping;
  }

  /** Rings partition p's group in ms, unless a ring there is set to go sooner. */
  void ringIn(int p, long ms) {
    long at = clock.millis() + ms;
    Long earlier = set.get(p);
    if (earlier != null && earlier <= at) {
      return;
    }
    set.put(p, at);
    vertx.setTimer(ms, t -> {
      if (!Long.valueOf(at).equals(set.get(p))) {
        return;
      }
      set.remove(p);
      if (!stopping.getAsBoolean()) {
        store.ringAll(p, group).onFailure(e -> log.debug("ringing for held work: {}", e.getMessage()));
      }
    });
  }
}
