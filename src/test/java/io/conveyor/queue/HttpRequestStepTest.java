package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** http/request against a local service: retries with backoff, Retry-After, non-retryable codes, the guard. */
class HttpRequestStepTest {
  private final Vertx vertx = Vertx.vertx();
  private final List<JsonObject> seen = new CopyOnWriteArrayList<>();
  private TestNode node;
  private int port;

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
    vertx.close().await();
  }

  /** A service whose answer to the n-th request (from 1) the test decides; every request is recorded. */
  private void serve(BiConsumer<Integer, HttpServerRequest> answer) {
    HttpServer server = vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(body -> {
      seen.add(new JsonObject().put("atNanos", System.nanoTime()).put("method", req.method().name())
          .put("path", req.path()).put("tx", req.getHeader("X-Tx")).put("key", req.getHeader("Idempotency-Key"))
          .put("requestId", req.getHeader("X-Request-Id"))
          .put("body", body.toString()).put("traceparent", req.getHeader("traceparent")));
      answer.accept(seen.size(), req);
    }));
    port = server.listen(0, "127.0.0.1").await().actualPort();
  }

  private void startNode(String step, String retry, boolean allowLocal) {
    String pipeline = "{'name':'call','nodeGroup':'master','transactionType':true,'steps':[" + step + "]"
        + (retry == null ? "" : ",'retry':" + retry) + "}";
    node = new TestNode().set("REAPER_INTERVAL", "20ms").pipeline("call", pipeline.replace("PORT",
        Integer.toString(port)));
    if (allowLocal) {
      node.set("WEBHOOKS_ALLOW_HOSTS", "127.0.0.1");
    }
    node.start(new TestSteps().registry());
  }

  private static final String POST = "{'type':'http/request','params':{'method':'POST',"
      + "'url':'http://127.0.0.1:PORT/orders/${input.id}','headers':{'X-Tx':'${txId}'},"
      + "'body':{'order':'${input.id}','lines':'${input.lines}'}}}";

  @Test
  void a_service_that_fails_twice_is_called_three_times_with_growing_gaps_and_the_transaction_succeeds() {
    List<JsonObject> retryViews = new CopyOnWriteArrayList<>();
    serve((n, req) -> {
      if (n == 2) {
        // the second attempt: its status says so, and keeps the first attempt's error (read before answering;
        // never await on the server's event loop)
        node.transactions.status(seen.get(0).getString("tx"), "acme").onComplete(s -> {
          retryViews.add(s.succeeded() ? s.result().toJson().getJsonObject("retry") : new JsonObject());
          req.response().setStatusCode(500).end("try later");
        });
      } else if (n == 1) {
        req.response().setStatusCode(500).end("try later");
      } else {
        req.response().putHeader("Content-Type", "application/json").end("{\"accepted\":true}");
      }
    });
    startNode(POST, "{'maxAttempts':5,'initialInterval':'100ms','backoffCoefficient':2}", true);
    String txId = node.start("call", new JsonObject().put("id", "o-17").put("lines", new io.vertx.core.json.JsonArray()
        .add(1).add(2)));
    TxSummary done = node.awaitFinal(txId);

    assertEquals(TxStatus.SUCCESS, done.status(), done.note());
    assertEquals(new JsonObject().put("status", 200).put("body", new JsonObject().put("accepted", true)),
        done.output());
    assertEquals(3, seen.size(), "requests the service saw");
    long gap1 = (seen.get(1).getLong("atNanos") - seen.get(0).getLong("atNanos")) / 1_000_000;
    long gap2 = (seen.get(2).getLong("atNanos") - seen.get(1).getLong("atNanos")) / 1_000_000;
    assertTrue(gap1 >= 100, "first gap " + gap1 + " ms");
    assertTrue(gap2 >= 200, "second gap " + gap2 + " ms");
    assertEquals(2, retryViews.get(0).getInteger("attempt"));
    assertEquals("http-500", retryViews.get(0).getJsonObject("lastError").getString("code"));
    JsonObject first = seen.get(0);
    assertEquals("/orders/o-17", first.getString("path"));
    assertEquals(txId, first.getString("tx"));
    assertTrue(seen.stream().allMatch(r -> r.getString("key").equals(txId + ":1")),
        "one idempotency key for every attempt of the step: " + seen);
    assertEquals(new JsonObject().put("order", "o-17").put("lines", new io.vertx.core.json.JsonArray().add(1).add(2)),
        new JsonObject(first.getString("body")));
  }

  @Test
  void a_failure_listed_as_non_retryable_ends_the_transaction_after_one_request() {
    serve((n, req) -> req.response().setStatusCode(500).end());
    startNode(POST, "{'maxAttempts':5,'initialInterval':'100ms','nonRetryable':['http-500']}", true);
    TxSummary done = node.awaitFinal(node.start("call", new JsonObject().put("id", "x").put("lines", 1)));
    assertEquals(TxStatus.FAILED, done.status());
    assertEquals(1, seen.size());
    assertEquals(500, done.output().getInteger("status"));
  }

  @Test
  void a_client_error_is_not_retried_but_429_waits_for_its_retry_after() {
    serve((n, req) -> {
      if (n == 1) {
        req.response().setStatusCode(429).putHeader("Retry-After", "1").end();
      } else {
        req.response().setStatusCode(404).end("no such order");
      }
    });
    startNode("{'type':'http/request','params':{'url':'http://127.0.0.1:PORT/orders/${input.id}'}}",
        "{'maxAttempts':5,'initialInterval':'100ms'}", true);
    TxSummary done = node.awaitFinal(node.start("call", new JsonObject().put("id", "a b")));
    assertEquals(TxStatus.FAILED, done.status());
    assertEquals(2, seen.size(), "429 retried once, 404 not at all");
    assertTrue((seen.get(1).getLong("atNanos") - seen.get(0).getLong("atNanos")) / 1_000_000 >= 1000,
        "Retry-After: 1 outweighs a 100 ms interval");
    assertEquals("/orders/a%20b", seen.get(0).getString("path"));
    assertEquals(new JsonObject().put("status", 404).put("body", "no such order"), done.output());
  }

  @Test
  void a_loopback_target_is_refused_unless_allowed_and_never_called() {
    serve((n, req) -> req.response().end());
    startNode("{'type':'http/request','params':{'url':'http://127.0.0.1:PORT/x'}}", "{'maxAttempts':3}", false);
    TxSummary done = node.awaitFinal(node.start("call", new JsonObject()));
    assertEquals(TxStatus.FAILED, done.status());
    assertTrue(done.note().contains("127.0.0.1 is 127.0.0.1, a loopback"), done.note());
    assertEquals(0, seen.size());
  }

  @Test
  void a_host_that_does_not_resolve_fails_as_http_dns_and_is_retried() {
    // .invalid never resolves (RFC 6761); allowed or not, the lookup fails the same way
    for (boolean allowed : new boolean[] {false, true}) {
      if (node != null) {
        node.close();
      }
      node = new TestNode().pipeline("call", ("{'name':'call','nodeGroup':'master','transactionType':true,'steps':["
          + "{'type':'http/request','params':{'url':'http://no-such-host.invalid/x'}}],"
          + "'retry':{'maxAttempts':2,'initialInterval':'10ms'}}"));
      if (allowed) {
        node.set("WEBHOOKS_ALLOW_HOSTS", "no-such-host.invalid");
      }
      node.start(new TestSteps().registry());
      TxSummary done = node.awaitFinal(node.start("call", new JsonObject()));
      assertEquals(TxStatus.FAILED, done.status(), done.note());
      io.vertx.core.json.JsonArray errors = done.toJson().getJsonArray("errors");
      assertEquals(2, errors.size(), "retried once: " + errors);
      assertEquals(List.of("http-dns", "http-dns"), errors.stream().map(e -> ((JsonObject) e).getString("code"))
          .toList(), "allowed " + allowed);
    }
  }

  @Test
  void a_placeholder_the_input_lacks_fails_the_step_without_a_request() {
    serve((n, req) -> req.response().end());
    startNode(POST, "{'maxAttempts':3}", true);
    TxSummary done = node.awaitFinal(node.start("call", new JsonObject().put("lines", 1)));
    assertEquals(TxStatus.FAILED, done.status());
    assertEquals("${input.id} has no value in this transaction", done.note());
    assertEquals(0, seen.size());
  }

  @Test
  void a_traced_transactions_call_carries_the_steps_span_as_traceparent() {
    var exporter = io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter.create();
    var sdk = io.opentelemetry.sdk.OpenTelemetrySdk.builder().setTracerProvider(
        io.opentelemetry.sdk.trace.SdkTracerProvider.builder().addSpanProcessor(
            io.opentelemetry.sdk.trace.export.SimpleSpanProcessor.create(exporter)).build()).build();
    serve((n, req) -> req.response().end("ok"));
    node = new TestNode().tracing(io.conveyor.trace.Tracing.of(sdk)).set("WEBHOOKS_ALLOW_HOSTS", "127.0.0.1")
        .pipeline("call", ("{'name':'call','nodeGroup':'master','transactionType':true,'steps':[" + POST + "]}")
            .replace("PORT", Integer.toString(port)));
    node.start(new TestSteps().registry());
    String txId = node.start("call", new JsonObject().put("id", "t-1").put("lines", 1));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
    var step = io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(5), "the step's span",
        () -> exporter.getFinishedSpanItems().stream().filter(x -> x.getName().equals("step http/request"))
            .findFirst().orElse(null), x -> x != null);
    String header = seen.get(0).getString("traceparent");
    assertTrue(header != null && header.startsWith("00-" + step.getTraceId() + "-" + step.getSpanId() + "-"),
        header + " against " + step.getSpanContext());
    sdk.close();
  }

  @Test
  void the_key_goes_in_the_header_a_step_names_and_a_rerun_sends_a_new_one() {
    serve((n, req) -> req.response().setStatusCode(n == 1 ? 409 : 200).end("ok"));
    startNode("{'type':'http/request','params':{'url':'http://127.0.0.1:PORT/','idempotencyHeader':'X-Request-Id'}}",
        null, true);
    String txId = node.start("call", new JsonObject());
    assertEquals(TxStatus.FAILED, node.awaitFinal(txId).status());
    node.transactions.rerun(txId, "acme", false).await();
    io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "the rerun's call", seen::size, n -> n == 2);
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
    assertEquals(txId + ":1", seen.get(0).getString("requestId"));
    assertEquals(txId + ":1:r2", seen.get(1).getString("requestId"));
    assertTrue(seen.stream().allMatch(r -> r.getString("key") == null), "no Idempotency-Key beside it: " + seen);
  }
}
