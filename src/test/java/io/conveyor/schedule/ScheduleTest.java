package io.conveyor.schedule;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.Schedule;
import io.conveyor.pipeline.StepResult;
import io.conveyor.redis.ScheduleStore;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Schedules on a real node whose clock the test moves: each fire starts once, overlap skip and catch-up latest
 * hold, a fire left in the purgatory by a leader that died is driven to its one start, and a schedule whose
 * pipeline is disabled pauses itself.
 */
class ScheduleTest {
  private final TestSteps steps = new TestSteps();
  private final MutableClock clock = new MutableClock(1_800_000_000_000L);
  private TestNode node;
  private TestNode other;

  private TestNode node(String schedule) {
    return new TestNode().clock(clock).set("SCHEDULES_INTERVAL", "20ms").set("SCHEDULES_REDRIVE_AFTER", "1s")
        .set("SCHEDULES_LEASE", "1s").set("SCHEDULES_GRACE", "200ms")
        .pipeline("tick", "{'name':'tick','nodeGroup':'master','transactionType':true,'steps':[{'type':'test/record'}]}")
        .pipeline("long", "{'name':'long','nodeGroup':'master','transactionType':true,'steps':[{'type':'test/hold'},"
            + "{'type':'test/record'}]}")
        .pipeline("gated", "{'name':'gated','nodeGroup':'master','transactionType':true,"
            + "'singleton':{'key':'${input.account}'},'steps':[{'type':'test/record'}]}")
        .schedule("s", schedule);
  }

  @AfterEach
  void stop() {
    if (other != null) {
      other.close();
    }
    if (node != null) {
      node.close();
    }
  }

  private JsonObject state(TestNode n) {
    return new ScheduleStore(n.store.context).get("s").await();
  }

  private long count(TestNode n, String field) {
    String v = state(n).getString(field);
    return v == null ? 0 : Long.parseLong(v);
  }

  private Set<String> fireTimes() {
    return steps.recorded.stream().map(r -> r.getString("txId"))
        .map(id -> node.transactions.status(id, "acme").await().toJson().getJsonObject("metadata")
            .getJsonObject("schedule").getString("fireTime")).collect(Collectors.toSet());
  }

  private long purgatory(TestNode n) {
    long total = 0;
    for (int p : n.keys.all()) {
      total += cmd("ZCARD", n.keys.schedulePurgatoryZ(p)).toLong();
    }
    return total;
  }

  @Test
  void an_every_second_schedule_starts_one_transaction_per_second_of_its_clock() {
    node = node("{'pipeline':'tick','owner':'acme','every':'1s','input':{'from':'schedule'}}").start(steps.registry());
    for (int i = 1; i <= 5; i++) {
      clock.advance(Duration.ofSeconds(1));
      int n = i;
      Eventually.until(Duration.ofSeconds(10), "fire " + i, steps.recorded::size, size -> size == n);
    }
    assertEquals(5, fireTimes().size(), "five distinct fire times");
    assertEquals(new JsonObject().put("from", "schedule"), steps.recorded.get(0).getJsonObject("input"));
    // a fire is recorded (schedule-done) after its transaction started, which may have run already
    Eventually.until(Duration.ofSeconds(10), "five fires recorded", () -> count(node, "fires"), f -> f == 5);
    Eventually.until(Duration.ofSeconds(5), "the purgatory to empty", () -> purgatory(node), n -> n == 0);
  }

  @Test
  void overlap_skip_on_a_run_longer_than_two_periods_starts_one_run_in_three() {
    node = node("{'pipeline':'long','owner':'acme','every':'1s','overlap':'skip'}").start(steps.registry());
    clock.advance(Duration.ofSeconds(1));
    Promise<StepResult> first = steps.nextHeld();
    for (int skipped = 1; skipped <= 2; skipped++) {
      clock.advance(Duration.ofSeconds(1));
      int n = skipped;
      Eventually.until(Duration.ofSeconds(10), "skip " + n, () -> count(node, "skipped"), s -> s == n);
    }
    first.complete(StepResult.success(new JsonObject()));
    Eventually.until(Duration.ofSeconds(10), "the first run to end", steps.recorded::size, s -> s == 1);
    clock.advance(Duration.ofSeconds(1));
    Promise<StepResult> second = steps.nextHeld();
    second.complete(StepResult.success(new JsonObject()));
    Eventually.until(Duration.ofSeconds(10), "the second run to end", steps.recorded::size, s -> s == 2);
    Eventually.until(Duration.ofSeconds(10), "two runs in four fires, the two between skipped",
        () -> count(node, "fires"), f -> f == 2);
    assertEquals(2, count(node, "skipped"));
  }

  @Test
  void catch_up_latest_after_five_minutes_without_a_scheduler_starts_exactly_one_run() {
    node = node("{'pipeline':'tick','owner':'acme','every':'1s','catchUp':'latest'}").start(steps.registry());
    clock.advance(Duration.ofMinutes(5));
    Eventually.until(Duration.ofSeconds(10), "the catch-up run", steps.recorded::size, s -> s == 1);
    Eventually.until(Duration.ofSeconds(10), "the misses counted", () -> count(node, "misses"), m -> m == 299);
    clock.advance(Duration.ofSeconds(1));
    Eventually.until(Duration.ofSeconds(10), "the next run, on time", steps.recorded::size, s -> s == 2);
    // its fire is recorded (schedule-done) after its transaction started, which may have run already
    Eventually.until(Duration.ofSeconds(10), "two fires recorded", () -> count(node, "fires"), f -> f == 2);
  }

  @Test
  void fires_a_dead_leader_left_in_the_purgatory_start_exactly_once_when_the_next_leader_drives_them() {
    // a node without the scheduler role; the test plays a leader that dies at the worst moments
    node = node("{'pipeline':'tick','owner':'acme','every':'1s','overlap':'allow'}")
        .set("NODE_ROLES", "dequeue,api,reaper,archive")
        .start(steps.registry());
    ScheduleStore store = new ScheduleStore(node.store.context);
    int p = store.partitionOf("s");
    Schedule s = Schedule.fromJson(new JsonObject(state(node).getString("definition")), "s");
    long f1 = Long.parseLong(state(node).getString("nextFire"));
    clock.advance(Duration.ofSeconds(1));
    assertNotNull(store.due(p, "dead-leader", Duration.ofSeconds(1), Duration.ofMillis(200), 100, Duration.ofSeconds(1),
        true).await());
    // dies after moving the first fire to the purgatory, before starting it
    assertEquals(List.of(true), store.fire(p, "dead-leader", List.of(new ScheduleStore.Move("s", f1,
        ScheduleStore.Next.after(s, f1), 0, List.of(f1)))).await());
    // and, on the next fire, after starting it but before saying so
    long f2 = f1 + 1000;
    clock.advance(Duration.ofSeconds(1));
    store.fire(p, "dead-leader", List.of(new ScheduleStore.Move("s", f2, ScheduleStore.Next.after(s, f2), 0, List.of(f2))))
        .await();
    String startedByTheDead = node.transactions.start(s.startBody(f2)).await().txId();
    assertEquals(2, purgatory(node));

    other = node.sibling().clock(clock).set("NODE_ROLES", "scheduler").start(steps.registry());
    clock.advance(Duration.ofSeconds(1)); // the fires have waited redriveAfter; a third fire is due too
    Eventually.until(Duration.ofSeconds(15), "the next leader to drive the purgatory", () -> purgatory(node),
        n -> n == 0);
    Eventually.until(Duration.ofSeconds(10), "the third fire", () -> count(node, "fires"), n -> n >= 3);
    for (long f : List.of(f1, f2, f2 + 1000)) {
      Response id = cmd("GET", node.keys.externalId("acme", "schedule:s:" + f));
      assertNotNull(id, "fire " + f + " started");
    }
    assertEquals(startedByTheDead, cmd("GET", node.keys.externalId("acme", "schedule:s:" + f2)).toString(),
        "the fire the dead leader started is not started again");
    Eventually.until(Duration.ofSeconds(10), "three runs", steps.recorded::size, n -> n == 3);
    assertEquals(3, steps.recorded.stream().map(r -> r.getString("txId")).distinct().count());
  }

  @Test
  void a_schedule_whose_pipeline_is_disabled_pauses_itself_and_says_so_in_the_events() {
    node = node("{'pipeline':'tick','owner':'acme','every':'1s'}").start(steps.registry());
    node.store.pipelines.setDisabled("tick", true).await();
    clock.advance(Duration.ofSeconds(1));
    Eventually.until(Duration.ofSeconds(10), "the schedule to pause", () -> state(node).getString("paused"),
        "1"::equals);
    assertEquals("system", state(node).getString("pausedBy"));
    assertTrue(state(node).getString("pauseReason").contains("disabled"), state(node).encode());
    List<String> events = cmd("LRANGE", node.keys.eventsL(node.keys.partitionOfSchedule("s")), 0, -1).stream()
        .map(Object::toString).toList();
    assertTrue(events.stream().anyMatch(e -> e.contains("schedule-paused")), events.toString());
    assertEquals(0, steps.recorded.size());
  }

  @Test
  void a_schedule_of_a_gated_pipeline_pauses_itself_naming_why_rather_than_driving_its_fire_forever() {
    node = node("{'pipeline':'gated','owner':'acme','every':'1s','input':{'account':'a-1'}}").start(steps.registry());
    clock.advance(Duration.ofSeconds(1));
    Eventually.until(Duration.ofSeconds(10), "the schedule to pause", () -> state(node).getString("paused"),
        "1"::equals);
    assertTrue(state(node).getString("pauseReason").contains("externalId"), state(node).encode());
    assertEquals(0, purgatory(node));
    assertEquals(0, steps.recorded.size());
  }
}
