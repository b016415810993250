package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.testing.ScriptTest;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * trim.lua through EventStore.trim, on a harness with no node (a node's reaper trims once a stats slot and would
 * race these counts): events older than MAX_AGE leave the old end, an entry that does not parse leaves with
 * them, the newer ones stay, and exceptionZ keeps its newest MAX_EXCEPTIONS.
 */
class EventTrimTest extends ScriptTest {
  @Test
  void events_older_than_the_age_bound_go_from_the_old_end_and_newer_ones_stay() {
    long now = h.clock.millis();
    long bound = now - EventStore.MAX_AGE.toMillis();
    // newest first, as the writers LPUSH: one at the bound stays, one a millisecond older and a broken one go
    cmd("RPUSH", h.keys.eventsL(0), event(now, "tx-new"), event(bound, "tx-at-bound"), event(bound - 1, "tx-old"),
        "not json \u0000");
    EventStore events = new EventStore(h.store.context);
    assertEquals(2, events.trim(0).await());
    assertEquals(List.of("tx-new", "tx-at-bound"), subjects());
    assertEquals(0, events.trim(0).await(), "a second trim finds nothing to drop");

    h.clock.advance(Duration.ofMillis(1));
    assertEquals(1, events.trim(0).await(), "a millisecond later the one at the bound is past it");
    assertEquals(List.of("tx-new"), subjects());
  }

  @Test
  void exceptions_keep_their_newest_entries() {
    int total = EventStore.MAX_EXCEPTIONS + 2;
    for (int i = 0; i < total; i += 1000) {
      List<Object> args = new ArrayList<>(List.of("ZADD", h.keys.exceptionZ(0)));
      for (int j = i; j < Math.min(i + 1000, total); j++) {
        args.add(j);
        args.add("tx-" + j);
      }
      cmd(args.toArray());
    }
    new EventStore(h.store.context).trim(0).await();
    assertEquals(EventStore.MAX_EXCEPTIONS, cmd("ZCARD", h.keys.exceptionZ(0)).toLong());
    assertEquals(null, cmd("ZSCORE", h.keys.exceptionZ(0), "tx-1"), "the oldest went");
    assertEquals(2, cmd("ZSCORE", h.keys.exceptionZ(0), "tx-2").toInteger(), "the two oldest went, the next stayed");
  }

  private static String event(long time, String subject) {
    return new JsonObject().put("time", time).put("kind", "exception").put("node", "").put("subject", subject)
        .put("details", new JsonObject()).encode();
  }

  private List<String> subjects() {
    List<String> out = new ArrayList<>();
    cmd("LRANGE", h.keys.eventsL(0), 0, -1).forEach(r -> out.add(new JsonObject(r.toString()).getString("subject")));
    return out;
  }
}
