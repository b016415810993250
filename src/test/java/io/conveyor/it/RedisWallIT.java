package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxException;
import io.conveyor.pipeline.StepRegistry;
import io.conveyor.redis.RedisLink;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.FullRedis;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * At the wall itself (Redis 7, used_memory above maxmemory, noeviction): what was admitted still completes and is
 * archived, the heartbeat keeps beating, readiness says Redis is full, and a start is refused as "Redis is full"
 * (503 redis-memory): by the guard, and, past the guard, by Redis refusing the flagged start script whole.
 */
class RedisWallIT {
  private static final String KEY = "k-wall";

  @Test
  @Timeout(90)
  void at_the_wall_admitted_work_completes_and_is_archived_the_heartbeat_beats_and_starts_are_refused_as_full()
      throws Exception {
    int port = TestRedis.freePort();
    Vertx vertx = Vertx.vertx();
    HttpClient http = HttpClient.newHttpClient();
    try (FullRedis redis = FullRedis.local("64mb");
         TestNode node = TestNode.withPrefix(TestRedis.newPrefix())
             .redis("standalone", List.of(redis.url()), "")
             .set("HTTP_PORT", Integer.toString(port)).set("HTTP_HOST", "127.0.0.1").set("API_KEYS", "wall:client:" + KEY)
             .set("REDIS_MEMORY_CHECK_INTERVAL", "100ms").set("HEARTBEAT_INTERVAL", "200ms")
             .set("HEARTBEAT_TTL", "3s").set("ARCHIVE_DELAY", "100ms").set("ARCHIVE_INTERVAL", "100ms")
             .pipeline("slow", "{'name': 'slow', 'nodeGroup': 'master', 'transactionType': true, 'steps': ["
                 + "{'type': 'util/delay', 'params': {'duration': '2s'}}]}")) {
      node.start(StepRegistry.withBuiltIns());
      RedisLink probe = new RedisLink(vertx, RedisLink.options(redis.url(), 100));
      List<String> admitted = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        HttpResponse<String> r = start(http, port);
        assertEquals(202, r.statusCode(), r.body());
        admitted.add(new JsonObject(r.body()).getString("txId"));
      }
      // the wall: a limit below what Redis holds, so every write that needs memory is refused from now on
      long used = redis.info("memory", "used_memory");
      redis.cli("CONFIG", "SET", "maxmemory", Long.toString(used - (256 << 10)));
      assertTrue(redis.cli("SET", node.prefix + "probe", "x").startsWith("OOM"), "Redis is at its wall");

      JsonObject ready = Eventually.until(Duration.ofSeconds(10), Duration.ofMillis(50), "readiness to say full",
          () -> new JsonObject(get(http, port, "/health/ready").body()), r -> "full".equals(r.getString("redis")));
      assertEquals("ready", ready.getString("status"));
      HttpResponse<String> refused = start(http, port);
      assertEquals(503, refused.statusCode(), refused.body());
      assertEquals("redis-memory", new JsonObject(refused.body()).getString("type"));
      assertTrue(refused.headers().firstValue("Retry-After").isPresent());

      // past the guard (the test's own Transactions hears no verdict): Redis refuses the flagged start whole
      TxException wall = assertThrows(TxException.class, () -> node.transactions.start(new JsonObject()
          .put("type", "slow").put("owner", "wall")).await());
      assertEquals(TxException.Kind.REDIS_MEMORY, wall.kind());
      assertTrue(wall.getMessage().startsWith("Redis is full"), wall.getMessage());
      assertEquals(null, node.store.reads.getState(wall.txId()).await(), "nothing of it was written");

      // the heartbeat goes on: its key is rewritten (a newer beat) and never expires
      String heartbeat = node.prefix + "node:" + node.node().nodeId() + ":heartbeat";
      String first = new JsonObject(probe.send(Request.cmd(Command.GET).arg(heartbeat)).await().toString())
          .getString("beat");
      Eventually.until(Duration.ofSeconds(5), Duration.ofMillis(50), "a newer heartbeat at the wall",
          () -> new JsonObject(probe.send(Request.cmd(Command.GET).arg(heartbeat)).await().toString())
              .getString("beat"), beat -> beat.compareTo(first) > 0);

      // what was admitted completes and is archived, at the wall
      Eventually.until(Duration.ofSeconds(30), Duration.ofMillis(200), "the admitted transactions archived",
          () -> admitted.stream().filter(id -> node.node().archive().find(id).await() == null).count(), n -> n == 0);
      for (String id : admitted) {
        assertEquals("success", node.node().archive().find(id).await().summary().status().wire());
      }
      assertTrue(probe.send(Request.cmd(Command.PTTL).arg(heartbeat)).await().toLong() > 0);

      // room again: starts are taken
      redis.cli("CONFIG", "SET", "maxmemory", "64mb");
      Eventually.until(Duration.ofSeconds(10), Duration.ofMillis(50), "a start taken again",
          () -> start(http, port).statusCode(), s -> s == 202);
      probe.close().await();
    } finally {
      vertx.close().await();
    }
  }

  private static HttpResponse<String> start(HttpClient http, int port) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/transactions"))
          .header("Authorization", "Bearer " + KEY).header("content-type", "application/json")
          .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(
              new JsonObject().put("type", "slow").encode())).build(), HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static HttpResponse<String> get(HttpClient http, int port, String path) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
          .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
