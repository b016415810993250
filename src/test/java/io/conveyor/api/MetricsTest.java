package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.conveyor.testing.WebhookReceiver;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** /metrics is Prometheus text (checked by a small parser here) and holds the series the issue names. */
class MetricsTest {
  /** One sample: name, labels, value. */
  record Sample(String name, Map<String, String> labels, double value) {
  }

  private static final Pattern SAMPLE = Pattern.compile(
      "([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})? (-?[0-9.eE+-]+|NaN|\\+Inf|-Inf)( -?[0-9]+)?");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

  /** Parses the text format; fails on any line that is neither a comment nor a sample. */
  static List<Sample> parse(String text) {
    List<Sample> out = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.isEmpty() || line.startsWith("# HELP ") || line.startsWith("# TYPE ")) {
        continue;
      }
      Matcher m = SAMPLE.matcher(line);
      if (!m.matches()) {
        throw new AssertionError("not Prometheus text: " + line);
      }
      Map<String, String> labels = new HashMap<>();
      if (m.group(3) != null && !m.group(3).isEmpty()) {
        Matcher l = LABEL.matcher(m.group(3));
        int end = 0;
        while (l.find() && l.start() == end) {
          labels.put(l.group(1), l.group(2));
          end = l.end();
        }
        if (end != m.group(3).length()) {
          throw new AssertionError("bad labels: " + line);
        }
      }
      String v = m.group(4);
      out.add(new Sample(m.group(1), labels, v.equals("+Inf") ? Double.POSITIVE_INFINITY
          : v.equals("-Inf") ? Double.NEGATIVE_INFINITY : Double.parseDouble(v)));
    }
    return out;
  }

  private static double value(List<Sample> all, String name, Map<String, String> labels) {
    return all.stream().filter(s -> s.name().equals(name) && s.labels().entrySet().containsAll(labels.entrySet()))
        .mapToDouble(Sample::value).sum();
  }

  @Test
  void metrics_parse_as_prometheus_text_and_hold_the_named_series() {
    int port = TestRedis.freePort();
    try (WebhookReceiver receiver = new WebhookReceiver(WebhookReceiver.TEST_SECRET)) {
      TestNode node = new TestNode().set("HTTP_PORT", Integer.toString(port))
          .set("WEBHOOKS_SECRET", WebhookReceiver.TEST_SECRET).set("WEBHOOKS_ALLOW_HOSTS", "127.0.0.1")
          .set("ARCHIVE_DELAY", "0s").set("ARCHIVE_INTERVAL", "50ms")
          .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
              + "{'type':'util/fixed-reply','params':{'reply':{}}}]}")
          .start(new TestSteps().registry());
      Vertx client = Vertx.vertx();
      try {
        for (int i = 0; i < 5; i++) {
          // through the node's own API, so its counters see the starts
          new ConveyorClient(node.node().vertx(), io.conveyor.testing.KeyedApi.CLIENT).start(new JsonObject()
              .put("type", "order").put("owner", "acme")
              .put("input", new JsonObject()).put("webhook", receiver.url("/m"))).await();
        }
        // a cancel through the API of a transaction that waits (a delayed start) is counted where it ends
        ConveyorClient api = new ConveyorClient(node.node().vertx(), io.conveyor.testing.KeyedApi.CLIENT);
        String later = api.start(new JsonObject().put("type", "order").put("owner", "acme").put("delay", "1h"))
            .await().txId();
        api.cancel(later, "acme").await();
        Eventually.until(Duration.ofSeconds(10), "the webhooks", () -> receiver.deliveries().size(), n -> n >= 5);
        var http = client.createHttpClient();
        List<Sample> samples = Eventually.until(Duration.ofSeconds(10), "archive and webhook meters", () -> parse(
            http.request(HttpMethod.GET, port, "127.0.0.1", "/metrics").compose(r -> r.send()
                .compose(resp -> resp.body())).await().toString()),
            all -> value(all, "conveyor_archive_batch_size_sum", Map.of()) >= 5
                && value(all, "conveyor_webhook_deliveries_total", Map.of("outcome", "delivered")) >= 5);
        assertEquals(6.0, value(samples, "conveyor_transactions_started_total", Map.of()));
        assertEquals(1.0, value(samples, "conveyor_transactions_completed_total", Map.of("status", "cancelled")));
        long series = samples.stream().filter(x -> x.name().startsWith("conveyor_")).count();
        assertTrue(series < 300, series + " conveyor_ series");
        assertEquals(5.0, value(samples, "conveyor_transactions_completed_total", Map.of("status", "success")));
        assertEquals(5.0, value(samples, "conveyor_step_duration_seconds_count", Map.of("type", "util/fixed-reply")));
        assertTrue(value(samples, "conveyor_step_duration_seconds_bucket", Map.of("type", "util/fixed-reply")) > 0);
        assertTrue(value(samples, "conveyor_dequeue_wait_seconds_count", Map.of()) >= 5);
        assertTrue(value(samples, "conveyor_lua_script_seconds_count", Map.of("script", "complete")) >= 1);
        assertTrue(value(samples, "conveyor_lua_script_seconds_count", Map.of("script", "start")) >= 1);
        assertTrue(value(samples, "conveyor_archive_batch_seconds_count", Map.of()) >= 1);
        assertTrue(samples.stream().anyMatch(s -> s.name().equals("conveyor_workers_busy")));
        assertEquals(500.0, value(samples, "conveyor_workers_slots", Map.of()));
        assertTrue(samples.stream().anyMatch(s -> s.name().startsWith("jvm_memory_used_bytes")));
        assertTrue(samples.stream().anyMatch(s -> s.name().startsWith("vertx_")), "Vert.x's own meters");
        assertTrue(samples.stream().noneMatch(s -> s.labels().values().stream().anyMatch(v -> v.startsWith("tx-"))),
            "no txId in any label");
        assertTrue(samples.stream().noneMatch(s -> s.labels().containsKey("owner")), "no owners unless configured");
        // nor in Vert.x's meters (the event bus's have no address label: each owner's completions have an address)
        assertTrue(samples.stream().noneMatch(s -> s.labels().values().stream().anyMatch(v -> v.contains("acme"))),
            () -> "an owner in a label: " + samples.stream().filter(s -> s.labels().values().stream()
                .anyMatch(v -> v.contains("acme"))).map(Sample::name).distinct().toList());
      } finally {
        client.close().await();
        node.close();
      }
    }
  }

  @Test
  void limits_show_what_they_hold_back_and_what_runs_under_them() {
    int port = TestRedis.freePort();
    io.conveyor.testing.TestSteps steps = new io.conveyor.testing.TestSteps();
    // one partition (a hash-tag prefix on a Redis Cluster): the whole cap is this one queue's
    TestNode node = TestNode.withPrefix("{" + TestRedis.newPrefix().replace(":", "") + "}:")
        .set("REDIS_PARTITIONS", "1").set("HTTP_PORT", Integer.toString(port)).set("NODE_IDLE_WAIT", "200ms")
        .set("API_KEYS", "ops:admin:k-ops")
        .pipeline("capped", "{'name':'capped','nodeGroup':'master','transactionType':true,'maxConcurrency':1,"
            + "'steps':[{'type':'test/hold'}]}")
        .start(steps.registry());
    Vertx client = Vertx.vertx();
    try {
      for (int i = 0; i < 3; i++) {
        node.start("capped", new JsonObject());
      }
      var http = client.createHttpClient();
      List<Sample> samples = Eventually.until(Duration.ofSeconds(10), "one running and two held", () -> parse(
          http.request(HttpMethod.GET, port, "127.0.0.1", "/metrics").compose(r -> r.send()
              .compose(resp -> resp.body())).await().toString()),
          all -> value(all, "conveyor_limit_running", Map.of("group", "master", "limit", "capped")) == 1
              && value(all, "conveyor_limit_held", Map.of("group", "master", "limit", "capped")) == 2);
      assertEquals(0.0, value(samples, "conveyor_fair_waiting", Map.of("group", "master")));
      // the cluster view (and so the dashboard's limits table) shows the same, with the cap
      JsonObject cluster = new JsonObject(http.request(HttpMethod.GET, port, "127.0.0.1", "/api/v1/cluster")
          .compose(r -> r.putHeader("Authorization", "Bearer k-ops").send().compose(resp -> resp.body())).await()
          .toString());
      assertEquals(new JsonObject().put("running", 1L).put("held", 2L).put("maxConcurrency", 1).putNull("rateLimit"),
          cluster.getJsonObject("queues").getJsonObject("master").getJsonObject("limits").getJsonObject("capped"));
      for (int i = 0; i < 3; i++) {
        steps.nextHeld().complete(io.conveyor.pipeline.StepResult.success(new JsonObject()));
      }
      Eventually.until(Duration.ofSeconds(10), "nothing held or running", () -> parse(
          http.request(HttpMethod.GET, port, "127.0.0.1", "/metrics").compose(r -> r.send()
              .compose(resp -> resp.body())).await().toString()),
          all -> all.stream().noneMatch(x -> x.name().equals("conveyor_limit_held")
              || x.name().equals("conveyor_limit_running")));
    } finally {
      client.close().await();
      node.close();
    }
  }

  @Test
  void the_parser_refuses_what_is_not_prometheus_text() {
    assertEquals(1, parse("# TYPE x counter\nx_total{a=\"b\"} 3\n").size());
    org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class, () -> parse("x_total{a=b} 3"));
    org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class, () -> parse("<html>"));
  }
}
