package io.conveyor.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.redis.ScheduleStore;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.FullRedis;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A schedule that falls due while the memory guard refuses starts, on a Redis of the test's own whose maxmemory the
 * test moves (the node's watcher reads the real used_memory): the fire is moved on into the purgatory, its start is
 * refused (503 redis-memory) and it stays there, driven again every schedules.redriveAfter; once memory is below
 * the low-water mark, each fire that fell due meanwhile starts exactly once, late. None lost, none doubled, none
 * counted as missed or skipped.
 */
class ScheduleMemoryTest {
  private static final Pattern REFUSED = Pattern.compile("(?m)^conveyor_redis_memory_refused_total(?:\\{[^}]*})? (\\S+)$");
  private final TestSteps steps = new TestSteps();
  private final MutableClock clock = new MutableClock(1_800_000_000_000L);
  private FullRedis redis;
  private TestNode node;

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  private JsonObject state() {
    return new ScheduleStore(node.store.context).get("s").await();
  }

  private long count(String field) {
    String v = state().getString(field);
    return v == null ? 0 : Long.parseLong(v);
  }

  private long purgatory() {
    return Long.parseLong(redis.cli("ZCARD", node.keys.schedulePurgatoryZ(node.keys.partitionOfSchedule("s")))
        .trim());
  }

  /** Starts the node's start paths refused for memory so far (the scheduler's included). */
  private double refused() {
    Matcher m = REFUSED.matcher(node.node().metrics().scrape());
    return m.find() ? Double.parseDouble(m.group(1)) : 0;
  }

  private boolean judgedFull() {
    return node.node().metrics().scrape().contains("conveyor_redis_memory_full{partition=\""
        + node.keys.partitionOfSchedule("s") + "\"} 1.0");
  }

  private Set<String> fireTimes() {
    return steps.recorded.stream().map(r -> r.getString("txId"))
        .map(id -> node.transactions.status(id, "acme").await().toJson().getJsonObject("metadata")
            .getJsonObject("schedule").getString("fireTime")).collect(Collectors.toSet());
  }

  @Test
  void fires_that_fall_due_while_redis_is_full_each_start_once_late_when_memory_is_below_the_low_water_mark() {
    redis = FullRedis.local("1gb");
    node = TestNode.withPrefix(TestRedis.newPrefix()).redis("standalone", List.of(redis.url()), "").clock(clock)
        .set("SCHEDULES_INTERVAL", "20ms").set("SCHEDULES_REDRIVE_AFTER", "1s").set("SCHEDULES_LEASE", "1s")
        .set("SCHEDULES_GRACE", "200ms").set("REDIS_MEMORY_CHECK_INTERVAL", "50ms")
        .pipeline("tick", "{'name':'tick','nodeGroup':'master','transactionType':true,'steps':[{'type':'test/record'}]}")
        // overlap allow: every fire is a run of its own, so the count below is the fires', not the overlap's
        .schedule("s", "{'pipeline':'tick','owner':'acme','every':'1s','overlap':'allow'}")
        .start(steps.registry());
    long f1 = Long.parseLong(state().getString("nextFire"));

    // a limit that puts what Redis holds at 90 %: above the high-water mark (85 %), short of the wall
    long used = redis.info("memory", "used_memory");
    redis.cli("CONFIG", "SET", "maxmemory", Long.toString(used * 10 / 9));
    Eventually.until(Duration.ofSeconds(10), "the node to judge Redis full", this::judgedFull, full -> full);

    clock.advance(Duration.ofSeconds(1));
    Eventually.until(Duration.ofSeconds(10), "the due fire moved into the purgatory and its start refused",
        () -> purgatory() == 1 && refused() >= 1, ok -> ok);
    assertEquals(Long.toString(f1 + 1000), state().getString("nextFire"), "the schedule moved on to its next fire");
    assertNull(new ScheduleStore(node.store.context).startedBy("acme", "schedule:s:" + f1).await(),
        "no transaction of the refused fire");

    // redriveAfter later: the first fire is driven again and refused again, and the second falls due and is refused
    double before = refused();
    clock.advance(Duration.ofSeconds(1));
    Eventually.until(Duration.ofSeconds(10), "the second fire in the purgatory, both refused",
        () -> purgatory() == 2 && refused() >= before + 2, ok -> ok);
    assertTrue(judgedFull(), "still full: the refusals are the guard's");
    assertEquals(0, steps.recorded.size(), "nothing ran while Redis was full");
    assertEquals(0, count("fires"));

    // room again: what Redis holds is now far below the low-water mark (75 %)
    redis.cli("CONFIG", "SET", "maxmemory", "1gb");
    Eventually.until(Duration.ofSeconds(10), "the node to take starts again", this::judgedFull, full -> !full);
    clock.advance(Duration.ofSeconds(1));
    Eventually.until(Duration.ofSeconds(10), "the two late fires and the third, on time", steps.recorded::size,
        n -> n == 3);
    Eventually.until(Duration.ofSeconds(10), "the purgatory to empty", this::purgatory, n -> n == 0);
    Eventually.until(Duration.ofSeconds(10), "three fires recorded", () -> count("fires"), n -> n == 3);
    assertEquals(Set.of(Instant.ofEpochMilli(f1).toString(), Instant.ofEpochMilli(f1 + 1000).toString(),
        Instant.ofEpochMilli(f1 + 2000).toString()), fireTimes(),
        "each fire time started once");
    assertEquals(3, steps.recorded.stream().map(r -> r.getString("txId")).distinct().count());
    assertEquals(0, count("misses"), "a refused fire is late, not missed");
    assertEquals(0, count("skipped"));
  }
}
