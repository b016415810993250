package io.conveyor.api;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.bus.Addresses;
import io.conveyor.testing.Eventually;
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
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Operational events in one shape everywhere: a node death the reaper records is read through
 * GET /api/v1/admin/events (filtered), published on conveyor.events, and an entry of the earlier shape reads
 * the same way. (The age and size bounds are EventTrimTest's, on a harness with no reaper to race.)
 */
class EventsTest {
  @Test
  void a_node_death_is_read_filtered_published_and_old_events_go() throws Exception {
    int port = TestRedis.freePort();
    try (TestNode node = new TestNode().set("HTTP_PORT", Integer.toString(port)).set("REAPER_INTERVAL", "200ms")
        .set("API_KEYS", "ops:admin:k-ops,acme:client:k-acme").start(new TestSteps().registry())) {
      List<JsonObject> heard = new CopyOnWriteArrayList<>();
      node.node().vertx().eventBus().<JsonObject>consumer(Addresses.EVENTS, m -> heard.add(m.body()));
      // an event of the earlier shape, as an older version wrote it
      long now = System.currentTimeMillis();
      cmd("LPUSH", node.keys.eventsL(0), new JsonObject().put("type", "schedule-paused").put("time", now - 1000)
          .put("details", new JsonObject().put("scheduleId", "nightly").put("reason", "gone")).encode());
      // a node registered with no heartbeat: the reaper judges it dead
      String dead = "node-gone-" + Long.toHexString(System.nanoTime());
      cmd("ZADD", node.keys.nodesZ(), 1, dead);

      JsonObject event = Eventually.until(Duration.ofSeconds(10), "the node-dead event on the bus",
          () -> heard.stream().filter(e -> dead.equals(e.getString("subject"))).findFirst().orElse(null),
          e -> e != null);
      assertEquals("node-dead", event.getString("kind"));
      assertEquals(dead, event.getString("node"));
      assertEquals("heartbeat expired", event.getJsonObject("details").getString("reason"));
      assertTrue(event.getLong("time") >= now);

      HttpClient http = HttpClient.newHttpClient();
      JsonArray deaths = get(http, port, "/api/v1/admin/events?kind=node-dead&subject=" + dead).getJsonArray("events");
      assertEquals(1, deaths.size());
      assertEquals(event, deaths.getJsonObject(0));
      JsonArray old = get(http, port, "/api/v1/admin/events?kind=schedule-paused").getJsonArray("events");
      assertEquals(new JsonObject().put("time", now - 1000).put("kind", "schedule-paused").put("node", "")
          .put("subject", "nightly").put("details", new JsonObject().put("scheduleId", "nightly").put("reason", "gone")),
          old.getJsonObject(0));
      JsonArray all = get(http, port, "/api/v1/admin/events?since=" + (now - 1000)).getJsonArray("events");
      assertTrue(all.size() >= 2);
      assertTrue(all.getJsonObject(0).getLong("time") >= all.getJsonObject(all.size() - 1).getLong("time"),
          "newest first");
      assertEquals(400, status(http, port, "/api/v1/admin/events?limit=0", "k-ops"));
      assertEquals(400, status(http, port, "/api/v1/admin/events?since=yesterday", "k-ops"));
      assertEquals(400, status(http, port, "/api/v1/admin/events?knd=x", "k-ops"));
      // a typo of a kind would match nothing: refused, naming the nearest
      HttpResponse<String> typo = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
          + "/api/v1/admin/events?kind=nodedead")).header("Authorization", "Bearer k-ops").build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(400, typo.statusCode());
      assertTrue(typo.body().contains("did you mean node-dead?"), typo.body());
      assertEquals(403, status(http, port, "/api/v1/admin/events", "k-acme"));
    }
  }

  private static JsonObject get(HttpClient http, int port, String path) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Authorization", "Bearer k-ops").build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return new JsonObject(r.body());
  }

  private static int status(HttpClient http, int port, String path, String key) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Authorization", "Bearer " + key).build(), HttpResponse.BodyHandlers.ofString()).statusCode();
  }
}
