package io.conveyor.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.testing.BridgeClient;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.conveyor.testing.WebhookReceiver;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One trace per transaction, across nodes and processes: a client's span → the start on an API node → the
 * steps on a worker node → an event-bus step served by another process over the TCP bridge → a child
 * pipeline → the completion webhook. Spans are read from the SDK's in-memory exporter.
 */
class TracingTest {
  private static final String TRACED = "{'name':'traced','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'eventbus','params':{'address':'steps.ext'}},"
      + "{'type':'util/child-pipeline','params':{'pipeline':'inner'}}]}";
  private static final String INNER = "{'name':'inner','nodeGroup':'master','steps':["
      + "{'type':'util/fixed-reply','params':{'reply':{'inner':true}}}]}";
  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
      .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build();
  private final Tracing tracing = Tracing.of(sdk);
  private final WebhookReceiver receiver = new WebhookReceiver(WebhookReceiver.TEST_SECRET);
  private final List<AutoCloseable> open = new java.util.ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
    receiver.close();
    sdk.close();
  }

  private <T extends AutoCloseable> T keep(T c) {
    open.add(c);
    return c;
  }

  @Test
  void a_transaction_across_nodes_a_bridge_step_a_child_and_its_webhook_is_one_trace_in_order() throws Exception {
    int httpPort = TestRedis.freePort();
    int bridgePort = TestRedis.freePort();
    TestNode api = new TestNode().tracing(tracing).set("NODE_ROLES", "api")
        .set("HTTP_PORT", Integer.toString(httpPort))
        .set("API_KEYS", "acme:client:k-acme,worker:step:k-worker")
        .set("WEBHOOKS_SECRET", WebhookReceiver.TEST_SECRET).set("WEBHOOKS_ALLOW_HOSTS", "127.0.0.1")
        .set("WEBHOOKS_INTERVAL", "20ms").set("WEBHOOKS_INITIAL_DELAY", "100ms")
        .pipeline("traced", TRACED).pipeline("inner", INNER);
    TestNode worker = api.sibling().set("NODE_ROLES", "dequeue,reaper,archive,webhooks").set("HTTP_PORT", "0")
        .set("BRIDGE_TCP_PORT", Integer.toString(bridgePort));
    keep(api.start(new TestSteps().registry()));
    keep(worker.start(new TestSteps().registry()));
    BridgeClient stepServer = serve(worker, bridgePort);

    // the client's own span: the transaction's trace continues it
    Span client = tracing.start("client", SpanKind.CLIENT, null);
    String clientParent = Tracing.traceparent(client);
    HttpResponse<String> started = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + httpPort + "/api/v1/transactions"))
        .header("Authorization", "Bearer k-acme").header("Content-Type", "application/json")
        .header("traceparent", clientParent)
        .POST(HttpRequest.BodyPublishers.ofString(new JsonObject().put("type", "traced")
            .put("input", new JsonObject().put("n", 1)).put("webhook", receiver.url("/hook")).encode()))
        .build(), HttpResponse.BodyHandlers.ofString());
    client.end();
    assertEquals(202, started.statusCode(), started.body());
    String txId = new JsonObject(started.body()).getString("txId");

    // the other process: a bridge client serving the step, tracing its own work under the header it got
    JsonObject request = stepServer.read();
    while (!"steps.ext".equals(request.getString("address")) || request.getString("replyAddress") == null) {
      request = stepServer.read();
    }
    String stepParent = request.getJsonObject("headers").getString("traceparent");
    assertNotNull(stepParent, "the event-bus step's request carries traceparent: " + request.encode());
    Span ext = tracing.start("ext work", SpanKind.CONSUMER, stepParent);
    ext.end();
    stepServer.write(new JsonObject().put("type", "send").put("address", request.getString("replyAddress"))
        .put("body", new JsonObject().put("status", "success").put("output", new JsonObject().put("ext", 1))),
        "k-worker");

    assertEquals(TxStatus.SUCCESS, worker.awaitFinal(txId).status());
    WebhookReceiver.Delivery hook = Eventually.until(Duration.ofSeconds(10), "the webhook", receiver::deliveries,
        d -> !d.isEmpty()).get(0);
    List<SpanData> spans = Eventually.until(Duration.ofSeconds(10), "the webhook's span to end",
        exporter::getFinishedSpanItems, s -> s.stream().anyMatch(x -> x.getName().equals("webhook POST")));

    String traceId = client.getSpanContext().getTraceId();
    assertTrue(spans.stream().allMatch(s -> s.getTraceId().equals(traceId)), "one trace: " + names(spans));
    List<SpanData> inOrder = spans.stream().sorted(Comparator.comparingLong(SpanData::getStartEpochNanos)).toList();
    assertEquals(List.of("client", "start traced", "step eventbus", "ext work", "step util/child-pipeline",
        "step util/fixed-reply", "webhook POST"), names(inOrder));
    Map<String, SpanData> by = spans.stream().collect(Collectors.toMap(SpanData::getName, Function.identity()));
    assertEquals(by.get("client").getSpanId(), by.get("start traced").getParentSpanId());
    assertEquals(by.get("start traced").getSpanId(), by.get("step eventbus").getParentSpanId());
    assertEquals(by.get("step eventbus").getSpanId(), by.get("ext work").getParentSpanId());
    assertEquals(by.get("start traced").getSpanId(), by.get("step util/child-pipeline").getParentSpanId());
    assertEquals(by.get("step util/child-pipeline").getSpanId(), by.get("step util/fixed-reply").getParentSpanId(),
        "the child pipeline's steps hang under the step that started it");
    assertEquals(by.get("start traced").getSpanId(), by.get("webhook POST").getParentSpanId());
    // the steps ran on the worker node, and say so
    for (String step : List.of("step eventbus", "step util/child-pipeline", "step util/fixed-reply")) {
      assertEquals(worker.node().nodeId(), by.get(step).getAttributes().get(Tracing.NODE), step);
      assertEquals(step.contains("child") ? "child" : "success", by.get(step).getAttributes().get(Tracing.OUTCOME));
    }
    assertEquals(txId, by.get("start traced").getAttributes().get(Tracing.TX_ID));
    assertEquals("traced", by.get("step eventbus").getAttributes().get(Tracing.PIPELINE));
    assertEquals("inner", by.get("step util/fixed-reply").getAttributes().get(Tracing.PIPELINE));
    // the receiver got the delivery span's context
    assertNotNull(hook.traceparent());
    assertTrue(hook.traceparent().startsWith("00-" + traceId + "-" + by.get("webhook POST").getSpanId() + "-"),
        hook.traceparent());
  }

  @Test
  void with_tracing_off_nothing_is_kept_or_sent() throws Exception {
    int bridgePort = TestRedis.freePort();
    TestNode node = keep(new TestNode().set("API_KEYS", "acme:client:k-acme,worker:step:k-worker")
        .set("BRIDGE_TCP_PORT", Integer.toString(bridgePort))
        .pipeline("traced", TRACED).pipeline("inner", INNER).start(new TestSteps().registry()));
    BridgeClient stepServer = serve(node, bridgePort);
    String txId = node.start("traced", new JsonObject());
    JsonObject request = stepServer.read();
    while (!"steps.ext".equals(request.getString("address")) || request.getString("replyAddress") == null) {
      request = stepServer.read();
    }
    assertNull(request.getJsonObject("headers").getString("traceparent"), request.encode());
    assertNull(TestRedis.cmd("HGET", node.keys.stateH(txId), "trace"));
    stepServer.write(new JsonObject().put("type", "send").put("address", request.getString("replyAddress"))
        .put("body", new JsonObject().put("status", "success")), "k-worker");
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
    assertTrue(exporter.getFinishedSpanItems().isEmpty());
  }

  @Test
  void enabled_from_config_the_sdk_is_set_up_by_the_otel_variables_and_off_costs_nothing() throws Exception {
    assertTrue(!Tracing.fromConfig(new io.conveyor.config.Config.Tracing(false, "conveyor")).on());
    assertNull(Tracing.OFF.start("x", SpanKind.INTERNAL, null));
    // the default exporter (OTLP to localhost:4318) is built without a collector; nothing fails until export
    Tracing on = Tracing.fromConfig(new io.conveyor.config.Config.Tracing(true, "conveyor-test"));
    assertTrue(on.on());
    Span span = on.start("probe", SpanKind.INTERNAL, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    assertEquals("4bf92f3577b34da6a3ce929d0e0e4736", span.getSpanContext().getTraceId(), "continues the parent");
    // not ended: with no collector here, an export would only be retried until it times out
    java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
    on.close(closed::countDown);
    assertTrue(closed.await(15, java.util.concurrent.TimeUnit.SECONDS));
    assertTrue(!Tracing.wellFormed("00-xyz") && Tracing.wellFormed("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
  }

  @Test
  void spans_go_to_the_otlp_endpoint_the_otel_variables_name() throws Exception {
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    List<String> posts = new java.util.concurrent.CopyOnWriteArrayList<>();
    io.vertx.core.http.HttpServer collector = vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(b -> {
      posts.add(req.method() + " " + req.path() + " " + req.getHeader("content-type") + " " + (b.length() > 0));
      req.response().setStatusCode(200).end();
    })).listen(0, "127.0.0.1").await();
    // the SDK reads OTEL_* variables and their otel.* system properties alike
    System.setProperty("otel.exporter.otlp.endpoint", "http://127.0.0.1:" + collector.actualPort());
    System.setProperty("otel.bsp.schedule.delay", "20");
    try {
      Tracing on = Tracing.fromConfig(new io.conveyor.config.Config.Tracing(true, "conveyor-test"));
      on.start("probe", SpanKind.INTERNAL, null).end();
      Eventually.until(Duration.ofSeconds(10), "an export", () -> posts, p -> !p.isEmpty());
      assertEquals("POST /v1/traces application/x-protobuf true", posts.get(0));
      java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
      on.close(closed::countDown);
      assertTrue(closed.await(15, java.util.concurrent.TimeUnit.SECONDS));
    } finally {
      System.clearProperty("otel.exporter.otlp.endpoint");
      System.clearProperty("otel.bsp.schedule.delay");
      vertx.close().await();
    }
  }

  /** A bridge client serving steps.ext on the node, once its registration has landed (probed, then read off). */
  private BridgeClient serve(TestNode node, int port) throws Exception {
    BridgeClient c = keep(new BridgeClient(port));
    c.register("steps.ext", "k-worker");
    Eventually.until(Duration.ofSeconds(5), "the step server's registration", () -> {
      try {
        return node.node().vertx().eventBus().request("steps.ext", new JsonObject().put("probe", true))
            .transform(ar -> io.vertx.core.Future.succeededFuture(ar.failed() && String.valueOf(
                ar.cause().getMessage()).contains("No handlers"))).await(200, java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        return false; // it reached the client, which does not answer probes
      }
    }, noHandlers -> !noHandlers);
    JsonObject probe = c.read();
    assertTrue(probe.getJsonObject("body").containsKey("probe"), probe.encode());
    return c;
  }

  private static List<String> names(List<SpanData> spans) {
    return spans.stream().map(SpanData::getName).toList();
  }
}
