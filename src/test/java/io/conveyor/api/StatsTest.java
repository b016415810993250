package io.conveyor.api;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** After a known run, every stats slot holds exactly the known counts, with the right expiry. */
class StatsTest {
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private TestNode node;

  @AfterEach
  void stop() {
    node.close();
  }

  @Test
  void every_slot_of_every_series_counts_a_known_run_exactly_and_expires_when_its_series_says() {
    node = new TestNode().clock(clock).set("REAPER_INTERVAL", "50ms")
        .pipeline("ok", "{'name':'ok','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .pipeline("bad", "{'name':'bad','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fail','params':{'note':'no'}}]}")
        .pipeline("elsewhere", "{'name':'elsewhere','nodeGroup':'remote','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .start(new TestSteps().registry());
    for (int i = 0; i < 3; i++) {
      node.awaitFinal(start("ok", "acme"));
    }
    for (int i = 0; i < 2; i++) {
      node.awaitFinal(start("bad", "globex"));
    }
    String queued = start("elsewhere", "acme"); // no node serves group remote: it stays queued
    node.transactions.cancel(queued, "acme").await();

    Map<String, Long> expected = new TreeMap<>();
    count(expected, "queued", 3, "master", "ok", "acme");
    count(expected, "queued", 2, "master", "bad", "globex");
    count(expected, "queued", 1, "remote", "elsewhere", "acme");
    count(expected, "started", 3, "master", "ok", "acme");
    count(expected, "started", 2, "master", "bad", "globex");
    for (String name : new String[] {"completed", "completed.success"}) {
      count(expected, name, 3, "master", "ok", "acme");
    }
    for (String name : new String[] {"completed", "completed.failed"}) {
      count(expected, name, 2, "master", "bad", "globex");
    }
    for (String name : new String[] {"completed", "completed.cancelled"}) {
      count(expected, name, 1, "remote", "elsewhere", "acme");
    }
    // each completed run's step attempts, in its version's step histogram (their buckets depend on timing: the
    // test sums them); the cancelled one never ran a step
    expected.put("stepms." + version("ok") + ".1|pipeline=ok", 3L);
    expected.put("stepms." + version("bad") + ".1|pipeline=bad", 2L);
    // and in its group's histogram of every step (the group's latency)
    expected.put("attemptms|group=master", 5L);
    // each version's figures (a rollout's canary beside its stable): starts, and completions by status
    expected.put("vstarted." + version("ok") + "|pipeline=ok", 3L);
    expected.put("vstarted." + version("bad") + "|pipeline=bad", 2L);
    expected.put("vstarted." + version("elsewhere") + "|pipeline=elsewhere", 1L);
    expected.put("vended." + version("ok") + ".success|pipeline=ok", 3L);
    expected.put("vended." + version("bad") + ".failed|pipeline=bad", 2L);
    long now = clock.millis();
    long[][] series = {{1, 5_000, 300_000}, {2, 60_000, 7_200_000}, {3, 600_000, 86_400_000}};
    // a transaction counts in the 5 s series only; the coarser ones have nothing counted until the fold. The node
    // writes its start and complete calls' counts once a second (StatsTally)
    Eventually.until(Duration.ofSeconds(10), "the node's counts written", () -> counted(series[0], now),
        expected::equals);
    assertEquals(expected, counted(series[0], now), "series 1");
    assertEquals(Map.of(), counted(series[1], now), "series 2 before the fold");
    assertEquals(Map.of(), counted(series[2], now), "series 3 before the fold");
    // the reaper leader of each partition samples its queue lengths into the same slots
    for (int p : node.keys.all()) {
      String slot1 = node.keys.statsH(p, 1, now - now % 5_000);
      Eventually.until(Duration.ofSeconds(10), "a queue sample in partition " + p,
          () -> cmd("HGET", slot1, "queue.in|group=master"), v -> v != null);
    }

    JsonObject byPipeline = Stats.read(node.store.stats, clock, MultiMap.caseInsensitiveMultiMap().add("pipeline", "bad"))
        .await();
    JsonObject last = byPipeline.getJsonArray("slots").getJsonObject(byPipeline.getJsonArray("slots").size() - 1);
    JsonObject counters = last.getJsonObject("counters");
    assertEquals(2L, counters.fieldNames().stream().filter(f -> f.startsWith("stepms." + version("bad") + ".1."))
        .mapToLong(counters::getLong).sum(), counters.encode());
    counters.fieldNames().removeIf(f -> f.startsWith("stepms."));
    assertEquals(new JsonObject().put("queued", 2L).put("started", 2L).put("completed", 2L)
        .put("completed.failed", 2L).put("vstarted." + version("bad"), 2L)
        .put("vended." + version("bad") + ".failed", 2L), counters);
    assertEquals(60, byPipeline.getJsonArray("slots").size());
    // a group's answer sums its step attempts over the slots read: its latency over the last hour
    JsonObject byGroup = Stats.read(node.store.stats, clock, MultiMap.caseInsensitiveMultiMap()
        .add("series", "60s").add("group", "master")).await();
    JsonObject latency = byGroup.getJsonObject("latency");
    assertEquals(5L, latency.getLong("attempts"), byGroup.encode());
    assertTrue(latency.getLong("p50Ms") <= latency.getLong("p99Ms"), latency.encode());
    assertEquals(new JsonObject().put("attempts", 0L).put("p50Ms", null).put("p99Ms", null),
        Stats.read(node.store.stats, clock, MultiMap.caseInsensitiveMultiMap().add("group", "remote")).await()
            .getJsonObject("latency"));
    // a reader adds the 5 s slots not folded yet
    assertTotals(now, "before the fold");

    // once the 5 s slot has closed and the fold's lag has passed, the leader folds it: every slot of every
    // series then holds the known run exactly, and readers count it once
    long slot1 = now - now % 5_000;
    clock.advance(Duration.ofSeconds(20));
    for (int p : node.keys.all()) {
      String fold = node.keys.statsFold(p);
      Eventually.until(Duration.ofSeconds(10), "the fold of slot " + slot1 + " in partition " + p,
          () -> cmd("GET", fold), v -> v != null && v.toLong() >= slot1);
    }
    for (long[] s : series) {
      assertEquals(expected, counted(s, now), "series " + s[0]);
    }
    assertTotals(now, "after the fold");
  }

  /** The counters (sampled fields left out) of the slot of a series holding now, summed over the partitions. */
  private Map<String, Long> counted(long[] s, long now) {
    long slot = now - now % s[1];
    Map<String, Long> counted = new TreeMap<>();
    for (int p : node.keys.all()) {
      String key = node.keys.statsH(p, (int) s[0], slot);
      if (cmd("EXISTS", key).toInteger() == 0) {
        continue;
      }
      var all = cmd("HGETALL", key);
      for (String f : all.getKeys()) {
        if (!isSample(f)) {
          counted.merge(withoutBucket(f), all.get(f).toLong(), Long::sum);
        }
      }
      assertEquals(slot + s[1] + s[2], cmd("PEXPIRETIME", key).toLong(), "expiry of series " + s[0] + " in " + p);
    }
    return counted;
  }

  /** The 60 s and 600 s series, read as the API reads them, hold the run once. */
  private void assertTotals(long now, String when) {
    for (String series : new String[] {"60s", "600s"}) {
      JsonObject total = Stats.read(node.store.stats, clock, MultiMap.caseInsensitiveMultiMap().add("series", series)
          .add("from", java.time.Instant.ofEpochMilli(now).toString())
          .add("to", java.time.Instant.ofEpochMilli(now).toString())).await();
      JsonObject counters = total.getJsonArray("slots").getJsonObject(0).getJsonObject("counters");
      assertEquals(6L, counters.getLong("queued"), series + " " + when + ": " + counters.encode());
      assertEquals(5L, counters.getLong("started"), series + " " + when);
      assertEquals(6L, counters.getLong("completed"), series + " " + when);
      assertTrue(counters.containsKey("processing"), counters.encode());
    }
  }

  /**
   * A step histogram's field without its bucket (stepms.<version>.<step>|pipeline=<p>, attemptms|group=<g>): timing
   * decides the bucket.
   */
  private static String withoutBucket(String field) {
    if (field.startsWith("attemptms.")) {
      return field.replaceFirst("^attemptms\\.[^|]+", "attemptms");
    }
    return field.startsWith("stepms.") ? field.replaceFirst("^(stepms\\.[^.]+\\.\\d+)\\.[^|]+", "$1") : field;
  }

  private String version(String pipeline) {
    return cmd("HGET", node.keys.pipelineH(pipeline), "version").toString();
  }

  private static boolean isSample(String field) {
    return field.startsWith("queue.") || field.equals("processing") || field.equals("sleeping");
  }

  private String start(String type, String owner) {
    return node.transactions.start(new JsonObject().put("type", type).put("owner", owner).put("input",
        new JsonObject())).await().txId();
  }

  private static void count(Map<String, Long> m, String name, long n, String group, String pipeline, String owner) {
    for (String f : new String[] {name, name + "|group=" + group, name + "|pipeline=" + pipeline,
        name + "|owner=" + owner}) {
      m.merge(f, n, Long::sum);
    }
  }
}
