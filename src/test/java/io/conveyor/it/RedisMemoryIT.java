package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.pipeline.StepRegistry;
import io.conveyor.redis.RedisLink;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.FullRedis;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
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
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 29, as a user meets it: one owner floods a node on a Redis of 64 MB (noeviction) with starts of transactions
 * that wait a few seconds. The guard refuses starts with 503 redis-memory before Redis refuses any write, the
 * heartbeat never lapses, every admitted transaction completes and is archived, memory falls below the low-water
 * mark, and starts are taken again: none lost, none stuck, no 5xx but the documented 503. On the local Redis 7
 * (scripts flagged) and on the embedded Redis 6.2 of the quick start (no flags: the headroom alone protects it).
 */
class RedisMemoryIT {
  private static final String KEY = "k-flood";
  /** About 16 KB of input each: a few thousand waiting transactions fill 85 % of 64 MB. */
  private static final String PAD = "p".repeat(16_000);

  @Test
  @Timeout(120)
  void a_flood_on_redis_7_is_held_at_the_high_water_mark_and_all_it_admitted_completes() throws Exception {
    try (FullRedis redis = FullRedis.local("64mb")) {
      flood(redis);
    }
  }

  @Test
  @Timeout(120)
  void a_flood_on_the_embedded_redis_6_2_is_held_at_the_high_water_mark_and_all_it_admitted_completes()
      throws Exception {
    try (FullRedis redis = FullRedis.embedded("64mb")) {
      flood(redis);
    }
  }

  private void flood(FullRedis redis) throws Exception {
    int port = TestRedis.freePort();
    TestNode node = TestNode.withPrefix(TestRedis.newPrefix())
        .redis("standalone", List.of(redis.url()), "")
        .set("HTTP_PORT", Integer.toString(port)).set("HTTP_HOST", "127.0.0.1")
        .set("API_KEYS", "flood:client:" + KEY)
        .set("HTTP_START_RATE", "1000000").set("HTTP_START_BURST", "1000000")
        .set("REDIS_MEMORY_CHECK_INTERVAL", "100ms")
        .set("ARCHIVE_DELAY", "100ms").set("ARCHIVE_INTERVAL", "100ms")
        .set("REAPER_INTERVAL", "200ms")
        .pipeline("wait3", "{'name': 'wait3', 'nodeGroup': 'master', 'transactionType': true, 'steps': ["
            + "{'type': 'util/delay', 'params': {'duration': '3s'}}]}");
    Vertx vertx = Vertx.vertx();
    RedisLink probe = new RedisLink(vertx, RedisLink.options(redis.url(), 100));
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    try (node) {
      node.start(StepRegistry.withBuiltIns());
      String heartbeat = node.prefix + "node:" + node.node().nodeId() + ":heartbeat";
      Set<String> admitted = ConcurrentHashMap.newKeySet();
      Map<String, AtomicInteger> unexpected = new ConcurrentHashMap<>();
      AtomicInteger refused = new AtomicInteger();
      AtomicInteger admittedAfterRefusals = new AtomicInteger();
      AtomicBoolean stop = new AtomicBoolean();
      List<String> readyWhileFull = new ArrayList<>();
      ExecutorService clients = Executors.newFixedThreadPool(8);
      for (int c = 0; c < 8; c++) {
        clients.submit(() -> {
          while (!stop.get()) {
            HttpResponse<String> r = start(http, port);
            JsonObject body = new JsonObject(r.body());
            if (r.statusCode() == 202) {
              admitted.add(body.getString("txId"));
              if (refused.get() > 0) {
                admittedAfterRefusals.incrementAndGet();
              }
            } else if (r.statusCode() == 503 && "redis-memory".equals(body.getString("type"))
                && r.headers().firstValue("Retry-After").isPresent()
                && body.getString("detail").startsWith("Redis is full")) {
              if (refused.incrementAndGet() == 1) {
                synchronized (readyWhileFull) {
                  readyWhileFull.add(get(http, port, "/health/ready").body());
                }
              }
            } else {
              unexpected.computeIfAbsent(r.statusCode() + " " + r.body(), k -> new AtomicInteger()).incrementAndGet();
            }
          }
          return null;
        });
      }
      // the flood runs until starts were refused and, memory freed, taken again; the heartbeat is watched meanwhile
      long shortestTtl = Long.MAX_VALUE;
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (admittedAfterRefusals.get() < 50 && unexpected.isEmpty() && System.nanoTime() < deadline) {
        shortestTtl = Math.min(shortestTtl, probe.send(Request.cmd(Command.PTTL).arg(heartbeat)).await().toLong());
        java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
      }
      stop.set(true);
      clients.shutdown();
      assertTrue(clients.awaitTermination(30, TimeUnit.SECONDS));
      System.out.printf("redis-memory flood: %d admitted, %d refused with 503 redis-memory, %d admitted after the "
          + "first refusal; heartbeat PTTL never below %d ms%n", admitted.size(), refused.get(),
          admittedAfterRefusals.get(), shortestTtl);

      assertTrue(unexpected.isEmpty(), "only 202 and 503 redis-memory: " + unexpected);
      assertTrue(refused.get() > 0, "the flood was refused at the high-water mark");
      assertTrue(admittedAfterRefusals.get() >= 50, "starts were taken again below the low-water mark");
      assertTrue(shortestTtl > 0, "the heartbeat never lapsed: " + shortestTtl);
      JsonObject ready = new JsonObject(readyWhileFull.get(0));
      assertEquals("full", ready.getString("redis"), ready.encode());
      assertEquals("ready", ready.getString("status"), ready.encode());
      assertTrue(ready.getString("redisMemory").startsWith("full: partition 0"), ready.encode());
      // Redis itself never refused a write: the guard kept every script off the wall
      String errors = redis.cli("INFO", "errorstats");
      assertTrue(!errors.contains("errorstat_OOM"), errors);

      // every admitted transaction completes and is archived; Redis holds none of them any more
      Eventually.until(Duration.ofSeconds(40), Duration.ofMillis(200), "every admitted transaction archived",
          () -> admitted.stream().filter(id -> node.node().archive().find(id).await() == null).limit(5).toList(),
          List::isEmpty);
      for (String id : admitted) {
        assertEquals("success", node.node().archive().find(id).await().summary().status().wire(), id);
      }
      assertEquals(0, stateKeys(probe, node.prefix), "none stuck in Redis");
      assertTrue(redis.info("memory", "used_memory") < 0.75 * (64L << 20), "memory fell below the low-water mark");
      JsonArray events = new JsonArray(probe.send(Request.cmd(Command.LRANGE).arg(node.keys.eventsL(0)).arg(0)
          .arg(-1)).await().stream().map(e -> new JsonObject(e.toString()).getString("kind")).toList());
      assertTrue(events.contains("redis-memory-high") && events.contains("redis-memory-ok"), events.encode());
      assertTrue(!events.contains("node-dead"), events.encode());
      assertTrue(node.node().metrics().scrape().contains("conveyor_redis_memory_refused_total"));
    } finally {
      probe.close().await();
      vertx.close().await();
    }
  }

  /** Keys of transactions' states still in this Redis (SCAN; the test's own server). */
  private static int stateKeys(RedisLink link, String prefix) {
    int n = 0;
    String cursor = "0";
    do {
      var reply = link.send(Request.cmd(Command.SCAN).arg(cursor).arg("MATCH").arg(prefix + "*stateH:*")
          .arg("COUNT").arg(1000)).await();
      cursor = reply.get(0).toString();
      n += reply.get(1).size();
    } while (!"0".equals(cursor));
    return n;
  }

  private static HttpResponse<String> start(HttpClient http, int port) throws Exception {
    JsonObject body = new JsonObject().put("type", "wait3").put("input", new JsonObject().put("pad", PAD));
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/transactions"))
        .header("Authorization", "Bearer " + KEY).header("content-type", "application/json")
        .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(body.encode())).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static HttpResponse<String> get(HttpClient http, int port, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
  }
}
