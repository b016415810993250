package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.HttpWiring;
import io.conveyor.config.Config;
import io.conveyor.domain.Transactions;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.redis.PartitionHealth;
import io.conveyor.redis.PartitionProbe;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.RedisUnavailable;
import io.conveyor.testing.KeyedApi;
import io.conveyor.testing.MutableTicker;
import io.conveyor.testing.RedisClusterFixture;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.ConnectException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Per-partition health where operators look (issue 36): /health/ready, /api/v1/cluster and /metrics of a node with
 * three partitions (one Redis, or a Redis Cluster on its pass), served by the node's own HTTP verticle and route
 * groups on a health tracker the test marks by hand (the node's probe would mend the node's own within a second).
 */
class PartitionSurfacesTest {
  private final MutableTicker ticker = new MutableTicker(5_000_000_000L);
  private final PartitionHealth health = new PartitionHealth(3, Config.PartitionHealth.DEFAULTS, ticker);
  private TestNode node;
  private Vertx vertx;
  private HttpClient http;
  private int port;

  @BeforeEach
  void start() {
    node = new TestNode().set("REDIS_PARTITIONS", "3").start(new TestSteps().registry());
    vertx = Vertx.vertx();
    port = TestRedis.freePort();
    Config config = node.config();
    Config.Http h = config.http();
    Config.Http listen = new Config.Http(port, "127.0.0.1", h.maxBodyBytes(), h.maxWait(), h.startRate(),
        h.startBurst(), h.ownerStartRates(), h.searchBudget());
    RedisAccess r = node.node().redis();
    RedisAccess access = new RedisAccess(r.options(), r.timeout(), r.keys(), r.scripts(), r.clock(), r.ticker(),
        r.meter(), r.replicas(), r.limits(), r.encryption(), health);
    NodeMetrics metrics = new NodeMetrics(false).partitions(health);
    HttpWiring routes = new HttpWiring(config, node.node().catalog(), node.node().archive(), metrics, List.of(),
        () -> "ok", "node-test");
    vertx.deployVerticle(new HttpApiVerticle(listen, config.security().httpTls(), access,
        ctx -> new Transactions(ctx, node.node().catalog(), config, Future.succeededFuture(node.node().archive()),
            metrics), routes::on)).await();
    http = vertx.createHttpClient();
  }

  @AfterEach
  void stop() {
    vertx.close().await();
    node.close();
  }

  @Test
  void a_minority_failing_is_degraded_a_majority_not_ready_and_an_answer_makes_it_ready_again() {
    assertReady(200, "ready", new JsonObject().put("ok", 3));
    assertEquals(1.0, metric("conveyor_partition_state", "1", "ok"));
    assertEquals(0.0, metric("conveyor_partition_state", "1", "failing"));

    // a suspect one alone (a call out past redis.partitionSuspectAfter) is listed, and the node stays ready
    health.outSince(0, ticker.nanos() - Config.PartitionHealth.DEFAULTS.suspectAfter().toNanos());
    JsonObject slow = assertReady(200, "ready", null);
    assertEquals("suspect", slow.getJsonObject("partitions").getJsonArray("failing").getJsonObject(0)
        .getString("state"));
    health.succeeded(0);

    health.failed(1, new RedisUnavailable(new ConnectException("Connection refused (test)")));
    ticker.advance(Duration.ofSeconds(30));
    JsonObject degraded = assertReady(200, "degraded", null);
    JsonObject partitions = degraded.getJsonObject("partitions");
    assertEquals(2, partitions.getInteger("ok"));
    JsonObject failing = partitions.getJsonArray("failing").getJsonObject(0);
    assertEquals(1, failing.getInteger("partition"));
    assertEquals("failing", failing.getString("state"));
    assertTrue(failing.getString("reason").contains("Connection refused (test)"), failing.encode());
    // since: when it began failing, 30 s ago by the ticker, as wall time
    long ago = Duration.between(Instant.parse(failing.getString("since")), Instant.now()).toSeconds();
    assertTrue(ago >= 29 && ago <= 40, failing.encode());
    assertEquals(1, partitions.getJsonArray("failing").size());
    assertEquals(0.0, metric("conveyor_partition_state", "1", "ok"));
    assertEquals(1.0, metric("conveyor_partition_state", "1", "failing"));
    assertEquals(1.0, metric("conveyor_partition_state", "0", "ok"));
    assertEquals(1.0, metric("conveyor_partition_state_changes_total", "1", null));

    JsonArray each = cluster().getJsonArray("partitions");
    assertEquals(3, each.size());
    assertEquals("failing", each.getJsonObject(1).getString("state"));
    assertTrue(each.getJsonObject(1).getString("reason").contains("Connection refused (test)"));
    assertEquals("ok", each.getJsonObject(0).getString("state"));
    assertEquals("", each.getJsonObject(0).getString("reason"));
    for (int p = 0; p < 3; p++) {
      String master = each.getJsonObject(p).getString("master");
      if (TestRedis.clusterMode()) {
        int owner = TestRedis.cluster().masterOfKey(node.keys.processingZ(p));
        assertTrue(master != null && master.endsWith(":" + owner), "partition " + p + " on " + master);
      } else {
        assertNull(master, "one Redis holds every partition: no master named");
      }
    }

    // a call out past redis.partitionSuspectAfter: suspect, still degraded (it may yet answer)
    health.outSince(2, ticker.nanos() - Config.PartitionHealth.DEFAULTS.suspectAfter().toNanos());
    JsonObject suspect = assertReady(200, "degraded", null);
    assertEquals(1, suspect.getJsonObject("partitions").getInteger("ok"));
    assertEquals("suspect", suspect.getJsonObject("partitions").getJsonArray("failing").getJsonObject(1)
        .getString("state"));
    assertEquals(1.0, metric("conveyor_partition_state", "2", "suspect"));

    health.failed(2, new RedisUnavailable(new ConnectException("Connection refused (test)")));
    assertReady(503, "not ready", null);
    assertEquals(2.0, metric("conveyor_partition_state_changes_total", "2", null));

    health.succeeded(1);
    health.succeeded(2);
    assertReady(200, "ready", new JsonObject().put("ok", 3));
    assertEquals(2.0, metric("conveyor_partition_state_changes_total", "1", null));
    assertEquals("ok", cluster().getJsonArray("partitions").getJsonObject(1).getString("state"));
  }

  /**
   * The start-time check behind the node's WARN: on a Redis Cluster, the masters with cluster-require-full-coverage
   * yes (the fixture's default) are named and one set to no is not; on one Redis there is nothing to check.
   */
  @Test
  void the_masters_that_stop_every_partition_during_a_failover_are_named() {
    PartitionProbe probe = new PartitionProbe(node.node().redis().open(vertx));
    if (!TestRedis.clusterMode()) {
      assertEquals(List.of(), probe.fullCoverage().await());
      return;
    }
    RedisClusterFixture cluster = TestRedis.cluster();
    int relaxed = cluster.masterPorts().get(0);
    String was = cluster.cmd(relaxed, "CONFIG", "GET", "cluster-require-full-coverage").contains("no") ? "no" : "yes";
    cluster.cmd(relaxed, "CONFIG", "SET", "cluster-require-full-coverage", "no");
    try {
      List<Integer> named = probe.fullCoverage().await().stream()
          .map(m -> Integer.parseInt(m.substring(m.lastIndexOf(':') + 1))).sorted().toList();
      List<Integer> expected = cluster.masterPorts().stream().filter(p -> p != relaxed)
          .filter(p -> cluster.cmd(p, "CONFIG", "GET", "cluster-require-full-coverage").contains("yes")).sorted().toList();
      assertFalse(expected.isEmpty(), "the fixture's masters keep Redis's default, yes");
      assertEquals(expected, named);
    } finally {
      cluster.cmd(relaxed, "CONFIG", "SET", "cluster-require-full-coverage", was);
    }
  }

  /** GET /health/ready: its status code and status, the other checks ok, and (when given) its partitions field. */
  private JsonObject assertReady(int code, String status, JsonObject partitions) {
    var resp = http.request(HttpMethod.GET, port, "127.0.0.1", "/health/ready").compose(r -> r.send())
        .compose(r -> r.body().map(b -> java.util.Map.entry(r.statusCode(), b.toJsonObject()))).await();
    JsonObject body = resp.getValue();
    assertEquals(code, resp.getKey(), body.encode());
    assertEquals(status, body.getString("status"), body.encode());
    assertEquals("ok", body.getString("redis"), body.encode());
    if (partitions != null) {
      assertEquals(partitions, body.getJsonObject("partitions"));
    }
    return body;
  }

  private JsonObject cluster() {
    return http.request(HttpMethod.GET, port, "127.0.0.1", "/api/v1/cluster")
        .compose(r -> r.putHeader("Authorization", "Bearer " + KeyedApi.ADMIN).send())
        .compose(resp -> resp.body()).await().toJsonObject();
  }

  /** A sample of /metrics by partition (and state, when not null); fails when there is none. */
  private double metric(String name, String partition, String state) {
    String text = http.request(HttpMethod.GET, port, "127.0.0.1", "/metrics").compose(r -> r.send())
        .compose(resp -> resp.body()).await().toString();
    String labels = state == null ? "partition=\"" + partition + "\""
        : "partition=\"" + partition + "\",state=\"" + state + "\"";
    Matcher m = Pattern.compile("(?m)^" + name + "\\{" + Pattern.quote(labels) + ",?\\} (\\S+)$").matcher(text);
    assertTrue(m.find(), name + "{" + labels + "} is not on /metrics");
    return Double.parseDouble(m.group(1));
  }
}
