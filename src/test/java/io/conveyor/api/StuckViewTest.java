package io.conveyor.api;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Stuck work on a real node: the reaper leader lists a parent whose child ended without waking it, and the admin
 * view, the conveyor_stuck gauge and the event log all show it; bad queries are refused naming the parameter.
 */
class StuckViewTest {
  private final HttpClient http = HttpClient.newHttpClient();
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private TestNode node;
  private String base;

  @BeforeEach
  void startNode() {
    startNode(new TestNode());
  }

  private void startNode(TestNode fresh) {
    int port = TestRedis.freePort();
    base = "http://127.0.0.1:" + port;
    node = fresh.clock(clock).set("REAPER_INTERVAL", "50ms").set("REAPER_STUCK_GRACE", "1m")
        .set("HTTP_PORT", Integer.toString(port)).set("API_KEYS", "acme:client:k-acme,ops:admin:k-ops")
        .start(new TestSteps().registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private record Reply(int status, String body) {
    JsonObject json() {
      return new JsonObject(body);
    }
  }

  private Reply get(String path, String key) {
    HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(base + path));
    if (key != null) {
      r.header("Authorization", "Bearer " + key);
    }
    try {
      HttpResponse<String> a = http.send(r.build(), HttpResponse.BodyHandlers.ofString());
      return new Reply(a.statusCode(), a.body());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private double gauge(String reason) {
    return MetricsTest.parse(get("/metrics", null).body()).stream()
        .filter(s -> s.name().equals("conveyor_stuck") && s.labels().equals(Map.of("reason", reason)))
        .mapToDouble(MetricsTest.Sample::value).sum();
  }

  @Test
  void a_parent_whose_child_ended_without_waking_it_is_listed_counted_and_logged() {
    listedCountedAndLogged(0);
  }

  @Test
  void with_three_partitions_the_reaper_of_each_finds_what_is_stuck_in_its_own() {
    node.close();
    startNode(new TestNode().set("REDIS_PARTITIONS", "3"));
    listedCountedAndLogged(2);
    assertEquals(1.0, MetricsTest.parse(get("/metrics", null).body()).stream()
        .filter(s -> s.name().equals("conveyor_leader_present") && s.labels().equals(Map.of("role", "judge",
            "partition", "all"))).mapToDouble(MetricsTest.Sample::value).sum(), "the judge has a leader");
  }

  private void listedCountedAndLogged(int p) {
    String parent = node.keys.newTxId(p);
    String child = node.keys.newTxId(p);
    long now = clock.millis();
    cmd("HSET", node.keys.stateH(parent), "status", "running", "processingState", "sleeping", "waitingFor", child,
        "owner", "acme", "type", "order", "created", now, "updated", now, "attempt", 1);
    cmd("HSET", node.keys.stateH(child), "status", "failed", "processingState", "complete", "completed", now,
        "owner", "acme");
    cmd("ZADD", node.keys.liveZ(p), now, parent);
    assertEquals(0.0, gauge("waiting"));
    clock.advance(Duration.ofMinutes(2)); // past the grace, and a new stats slot: the reaper looks
    // the list and the counts are two reads (one partition's reaper may write between them): wait for both
    JsonObject view = Eventually.until(Duration.ofSeconds(10), "the parent listed and counted",
        () -> get("/api/v1/admin/stuck?reason=waiting", "k-ops").json(),
        v -> v.getJsonArray("stuck").size() == 1 && v.getJsonObject("counts").getLong("waiting") == 1L);
    JsonObject one = view.getJsonArray("stuck").getJsonObject(0);
    assertEquals(parent, one.getString("txId"));
    assertEquals(p, one.getInteger("partition"));
    assertEquals("waiting", one.getString("reason"));
    assertEquals(child, one.getString("waitingFor"));
    assertEquals(1L, view.getJsonObject("counts").getLong("waiting"));
    assertEquals(0L, view.getJsonObject("counts").getLong("running"));
    assertEquals(1.0, gauge("waiting"));
    assertEquals(0.0, gauge("running"), "every reason has a series, 0 when none");
    JsonArray events = Eventually.until(Duration.ofSeconds(5), "the stuck event",
        () -> get("/api/v1/admin/events?kind=stuck", "k-ops").json().getJsonArray("events"), e -> e.size() == 1);
    assertEquals(parent, events.getJsonObject(0).getString("subject"));
    assertTrue(get("/api/v1/admin/stuck?owner=other", "k-ops").json().getJsonArray("stuck").isEmpty());
    // status=stuck in the search: the listed parent, as stuck; as waiting when waiting is asked; never a child
    JsonArray found = get("/api/v1/admin/transactions?status=stuck", "k-ops").json().getJsonArray("transactions");
    assertEquals(1, found.size(), found.encode());
    assertEquals(parent, found.getJsonObject(0).getString("txId"));
    assertEquals("stuck", found.getJsonObject(0).getString("phase"));
    JsonArray both = get("/api/v1/transactions?status=stuck,failed", "k-acme").json().getJsonArray("transactions");
    assertEquals(List.of(parent), both.stream().map(t -> ((JsonObject) t).getString("txId")).toList(),
        "acme's own: the child has no owner's live entry");
    JsonArray waiting = get("/api/v1/admin/transactions?status=waiting,stuck", "k-ops").json()
        .getJsonArray("transactions");
    assertEquals("waiting", waiting.getJsonObject(0).getString("phase"), "its own phase first, when asked");
    assertTrue(get("/api/v1/admin/transactions?status=running", "k-ops").json().getJsonArray("transactions").isEmpty());
  }

  @Test
  void the_view_is_for_admins_and_refuses_a_bad_query_naming_the_parameter() {
    assertEquals(403, get("/api/v1/admin/stuck", "k-acme").status());
    Reply bad = get("/api/v1/admin/stuck?reason=slow", "k-ops");
    assertEquals(400, bad.status());
    assertTrue(bad.body().contains("reason") && bad.body().contains("running, sleeping, retrying, waiting, held"),
        bad.body());
    Reply limit = get("/api/v1/admin/stuck?limit=0", "k-ops");
    assertEquals(400, limit.status());
    assertTrue(limit.body().contains("limit"), limit.body());
    Reply cursor = get("/api/v1/admin/stuck?cursor=x", "k-ops");
    assertEquals(400, cursor.status());
    assertTrue(cursor.body().contains("cursor"), cursor.body());
    Reply unknown = get("/api/v1/admin/stuck?reasn=held", "k-ops");
    assertEquals(400, unknown.status());
    assertTrue(unknown.body().contains("reason"), unknown.body());
    JsonObject empty = get("/api/v1/admin/stuck", "k-ops").json();
    assertTrue(empty.getJsonArray("stuck").isEmpty());
    assertEquals(null, empty.getValue("next"));
  }
}
