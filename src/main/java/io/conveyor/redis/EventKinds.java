package io.conveyor.redis;

import java.util.List;

/**
 * The kinds of operational event the scripts write on eventsL, as docs/redis-keys.md ("Events in eventsL") lists
 * them; EventKindsTest holds the two together. A reader that filters by kind (conveyor tail --kind) refuses any
 * other name rather than match nothing.
 */
public final class EventKinds {
  public static final List<String> ALL = List.of("node-dead", "exception", "schedule-paused", "webhook-url-paused",
      "webhook-exhausted", "archive-quarantined", "archive-retried", "archive-dropped", "webhook-outcome-unrecorded",
      "redis-memory-high", "redis-memory-ok", "stuck", "tx-paused", "tx-resumed", "migrated",
      "pipeline-rollout", "admin");

  private EventKinds() {
  }
}
