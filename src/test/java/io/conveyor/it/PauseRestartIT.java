package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.conveyor.model.TxStatus;
import io.conveyor.testing.AofRedis;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 34: a paused transaction survives a Redis restart as paused. Twenty sleepers on a Redis of the test's own
 * (appendonly yes, appendfsync always) are paused by one search; Redis is killed with -9 and started again on its
 * append-only file; their timers then fall due. Each is still paused where it stood, in the paused index, and has
 * not moved; resumed by one search, each wakes and succeeds.
 */
class PauseRestartIT {
  private static final int N = 20;
  private static final String KEY = "k-ops";
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private final TestSteps steps = new TestSteps();
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  @Timeout(60)
  void twenty_paused_sleepers_are_still_paused_and_unmoved_after_a_kill_9_of_redis_and_succeed_once_resumed()
      throws Exception {
    int port = TestRedis.freePort();
    try (AofRedis redis = new AofRedis();
         TestNode node = TestNode.withPrefix(TestRedis.newPrefix()).redis("standalone", List.of(redis.url()), "")
             .clock(clock).set("REAPER_INTERVAL", "20ms").set("NODE_IDLE_WAIT", "200ms")
             .set("HTTP_PORT", Integer.toString(port)).set("HTTP_HOST", "127.0.0.1")
             .set("API_KEYS", "ops:admin:" + KEY)
             .pipeline("sleepy", "{'name':'sleepy','nodeGroup':'master','transactionType':true,'steps':["
                 + "{'type':'util/delay','params':{'duration':'1h'}},{'type':'test/record'}]}")) {
      node.start(steps.registry());
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < N; i++) {
        ids.add(node.start("sleepy", new JsonObject().put("i", i)));
      }
      for (String id : ids) {
        Eventually.until(Duration.ofSeconds(10), id + " asleep", () -> state(redis, node, id).get("processingState"),
            "sleeping"::equals);
      }
      JsonObject paused = post(port, "/api/v1/admin/transactions/pause?pipeline=sleepy");
      assertEquals(N, paused.getInteger("paused"), paused.encode());
      Map<String, Map<String, String>> before = new LinkedHashMap<>();
      ids.forEach(id -> before.put(id, state(redis, node, id)));

      redis.kill();
      redis.restart();
      // their wake-ups fall due while they are paused: the reaper (back on the restarted Redis) parks each timer
      clock.advance(Duration.ofHours(2));
      for (String id : ids) {
        Eventually.until(Duration.ofSeconds(15), id + "'s timer parked after the restart",
            () -> state(redis, node, id).get("pausedWake"), w -> !w.isEmpty());
        Map<String, String> after = state(redis, node, id);
        assertNotEquals("", after.get("paused"), id + " paused after the restart");
        assertEquals(before.get(id).get("paused"), after.get("paused"), id + ": the same pause (who, why, since)");
        for (String f : List.of("step", "stepAttempt", "attempt", "processingState")) {
          assertEquals(before.get(id).get(f), after.get(f), id + " moved: " + f);
        }
        int p = node.keys.partitionOf(id);
        assertNotEquals("", redis.cli("ZSCORE", node.keys.phaseZ(p, "paused"), id).strip(), id + " in the index");
      }
      assertEquals(0, steps.recorded.size(), "no step ran while paused");

      JsonObject resumed = post(port, "/api/v1/admin/transactions/resume?pipeline=sleepy");
      assertEquals(N, resumed.getInteger("resumed"), resumed.encode());
      for (String id : ids) {
        assertEquals(TxStatus.SUCCESS, node.awaitFinal(id, Duration.ofSeconds(15)).status(), id);
      }
      assertEquals(N, steps.recorded.size(), "each ran its last step once");
    }
  }

  /** The fields of a transaction's state this test follows ("" for an absent one), read from the restarted server. */
  private static Map<String, String> state(AofRedis redis, TestNode node, String id) {
    List<String> fields = List.of("processingState", "step", "stepAttempt", "attempt", "paused", "pausedWake");
    List<String> args = new ArrayList<>(List.of("HMGET", node.keys.stateH(id)));
    args.addAll(fields);
    String[] values = redis.cli(args.toArray(String[]::new)).split("\n", -1);
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i < fields.size(); i++) {
      out.put(fields.get(i), i < values.length ? values[i].strip() : "");
    }
    return out;
  }

  private JsonObject post(int port, String path) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Authorization", "Bearer " + KEY).POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return new JsonObject(r.body());
  }
}
