package io.conveyor.redis;

import io.vertx.core.Future;
import java.util.List;

/** Admin events on partition 0's eventsL (admin-event.lua): each one an audit entry (README, Audit log). */
public final class AdminEvents {
  private AdminEvents() {
  }

  /** Logs the entry (its JSON) as an admin event at its time, naming the node that served it and its action. */
  public static Future<Void> log(StoreContext r, long at, String node, String action, String entryJson) {
    return r.run(r.scripts().adminEvent, List.of(r.keys().eventsL(0)), List.of(Long.toString(at), node, action,
        entryJson)).mapEmpty();
  }
}
