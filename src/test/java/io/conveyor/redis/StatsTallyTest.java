package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestRedis;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The node's tally of the stats counts start and complete calls answer: summed per slot, written by stats-add.lua
 * when the link closes (a stopping node loses nothing), and dropped, not written, once the reaper's fold of their
 * slot is due.
 */
class StatsTallyTest {
  private final String prefix = TestRedis.newPrefix();
  private final Vertx vertx = Vertx.vertx();
  private final RedisLink link = new RedisLink(vertx, TestRedis.options(1000));
  private final Keys keys = new Keys(prefix, 1);
  private final Scripts scripts = new Scripts();
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());

  @AfterEach
  void drop() {
    link.close().await();
    vertx.close().await();
    TestRedis.drop(prefix);
  }

  /** A reply shaped as start.lua's and complete.lua's last element: a line '<field> <n>' each. */
  private Response flat(String script) {
    return link.send(Request.cmd(Command.EVAL).arg(script).arg(0)).await();
  }

  private Map<String, String> slot(String key) {
    Map<String, String> out = new TreeMap<>();
    Response all = cmd("HGETALL", key);
    for (String field : all.getKeys()) {
      out.put(field, all.get(field).toString());
    }
    return out;
  }

  @Test
  void counts_of_two_calls_are_summed_held_and_written_once_when_the_link_closes() {
    StatsTally tally = new StatsTally(vertx, link, Duration.ofHours(1).toMillis());
    long now = clock.millis();
    String key = keys.statsKeys(0, now).get(0);
    tally.add(key, now, flat("return 'queued 2\\nstarted 1'"), scripts.statsAdd, clock);
    tally.add(key, now + 1, flat("return 'queued 3\\ncompleted|owner=acme 1'"), scripts.statsAdd, clock);
    tally.add(key, now, flat("return ''"), scripts.statsAdd, clock); // a call that counted nothing
    // the same text as the last: added up again from what was read of it
    tally.add(key, now + 2, flat("return 'queued 3\\ncompleted|owner=acme 1'"), scripts.statsAdd, clock);
    String refused = assertThrows(IllegalArgumentException.class, () -> tally.add(key, now, flat("return 'queued'"),
        scripts.statsAdd, clock)).getMessage();
    assertTrue(refused.contains("without a count"), refused);
    assertEquals(Map.of(), slot(key), "held: nothing written within the hour");
    tally.close().await();
    assertEquals(Map.of("queued", "8", "started", "1", "completed|owner=acme", "2"), slot(key));
    long ttl = cmd("PTTL", key).toLong();
    assertEquals(true, ttl > 0 && ttl <= 305_000, "expires when the 5 s series says: " + ttl);
  }

  @Test
  void counts_of_a_slot_whose_fold_is_due_are_dropped_and_the_others_written() {
    StatsTally tally = new StatsTally(vertx, link, Duration.ofHours(1).toMillis());
    long then = clock.millis();
    String old = keys.statsKeys(0, then).get(0);
    tally.add(old, then, flat("return 'queued 4'"), scripts.statsAdd, clock);
    clock.advance(Duration.ofSeconds(20)); // past the slot's start + 5 s + the fold's 10 s lag
    long now = clock.millis();
    String current = keys.statsKeys(0, now).get(0);
    tally.add(current, now, flat("return 'queued 1'"), scripts.statsAdd, clock);
    tally.close().await();
    assertEquals(0L, cmd("EXISTS", old).toLong(), "the folded slot's counts are not written");
    assertEquals(Map.of("queued", "1"), slot(current));
  }
}
