package io.conveyor.api;

import java.util.HashMap;
import java.util.Map;

/**
 * How many of the admin requests refused to one key without the admin role the audit log records: at most PER_MINUTE
 * a minute per key id; the rest are counted (conveyor_audit_entries_total{result="suppressed"}) and summed up in one
 * entry when that key's next minute begins. So a tenant's key cannot push real admin acts out of eventsL or auditX
 * by hammering admin routes (README, Audit log). Key ids are those of api.keys, so the map stays small. Owned by one
 * ApiGate and used on its context only.
 */
final class RefusalBudget {
  static final int PER_MINUTE = 10;
  private static final long MINUTE = 60_000;
  private final Map<String, Window> windows = new HashMap<>();

  /** A key's current minute: when it began and how many refusals it had. */
  private static final class Window {
    long start;
    int count;
  }

  /**
   * A refusal's fate: recorded or not, and (summed) how many the key's previous minute, which began at since, had
   * past the budget: 0 when none, else to be recorded now in one entry.
   */
  record Taken(boolean recorded, int suppressedBefore, long since) {
  }

  Taken take(String keyId, long now) {
    Window w = windows.computeIfAbsent(keyId, k -> new Window());
    int before = 0;
    long since = w.start;
    if (w.count == 0 || now - w.start >= MINUTE || now < w.start) {
      before = Math.max(0, w.count - PER_MINUTE);
      w.start = now;
      w.count = 0;
    }
    w.count++;
    return new Taken(w.count <= PER_MINUTE, before, since);
  }
}
