package io.conveyor.testing;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A webhook receiver: an HTTP server that checks every delivery with a Standard Webhooks verification of
 * its own (HMAC-SHA256 over "id.timestamp.body", constant-time compare, 5-minute tolerance), records it,
 * and answers as the test says (by webhook-id and how many times that id has come).
 */
public final class WebhookReceiver implements AutoCloseable {
  /** One request as it arrived (traceparent: its header, or null). */
  public record Delivery(String id, long timestamp, String signature, String body, boolean verified, long at,
                         int status, String traceparent) {
    public JsonObject json() {
      return new JsonObject(body);
    }
  }

  public static final long TOLERANCE_SECONDS = 300;
  /** A secret for tests (32 bytes). */
  public static final String TEST_SECRET = "whsec_" + Base64.getEncoder().encodeToString(
      "a-test-secret-of-32-bytes-length".getBytes(StandardCharsets.UTF_8));
  private final Vertx vertx = Vertx.vertx();
  private final HttpServer server;
  private final byte[] key;
  private final List<Delivery> deliveries = new CopyOnWriteArrayList<>();
  private final Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
  private volatile BiFunction<String, Integer, Integer> answer = (id, n) -> 200;
  private volatile String retryAfter;
  private volatile long delayMs;

  public WebhookReceiver(String secret) {
    key = Base64.getDecoder().decode(secret.substring("whsec_".length()));
    server = vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(b -> {
      String id = req.getHeader("webhook-id");
      String ts = req.getHeader("webhook-timestamp");
      String sig = req.getHeader("webhook-signature");
      String body = b.toString(StandardCharsets.UTF_8);
      long timestamp = ts == null ? 0 : Long.parseLong(ts);
      boolean ok = verify(id, timestamp, body, sig, System.currentTimeMillis() / 1000);
      int n = seen.computeIfAbsent(String.valueOf(id), k -> new AtomicInteger()).incrementAndGet();
      int status = ok ? answer.apply(id, n) : 401;
      deliveries.add(new Delivery(id, timestamp, sig, body, ok, System.nanoTime(), status,
          req.getHeader("traceparent")));
      if (retryAfter != null) {
        req.response().putHeader("retry-after", retryAfter);
      }
      if (delayMs > 0) {
        vertx.setTimer(delayMs, t -> req.response().setStatusCode(status).end()); // a slow receiver
      } else {
        req.response().setStatusCode(status).end();
      }
    })).listen(0, "127.0.0.1").await();
  }

  /** The receiver's check, as a receiver in production would write it. */
  public boolean verify(String id, long timestamp, String body, String header, long nowSeconds) {
    if (id == null || header == null || Math.abs(nowSeconds - timestamp) > TOLERANCE_SECONDS) {
      return false;
    }
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      byte[] expected = mac.doFinal((id + "." + timestamp + "." + body).getBytes(StandardCharsets.UTF_8));
      for (String part : header.split(" ")) {
        if (part.startsWith("v1,") && MessageDigest.isEqual(expected, Base64.getDecoder().decode(part.substring(3)))) {
          return true;
        }
      }
      return false;
    } catch (Exception e) {
      return false;
    }
  }

  /** How to answer: status for (webhook-id, the how-many-th time it came). */
  public WebhookReceiver answer(BiFunction<String, Integer, Integer> status) {
    this.answer = status;
    return this;
  }

  /** Answers each request this long after it arrived (a Vert.x timer; nothing blocks). */
  public WebhookReceiver delay(long millis) {
    this.delayMs = millis;
    return this;
  }

  public WebhookReceiver retryAfter(String header) {
    this.retryAfter = header;
    return this;
  }

  public String url(String path) {
    return "http://127.0.0.1:" + server.actualPort() + path;
  }

  public List<Delivery> deliveries() {
    return deliveries;
  }

  public List<Delivery> of(String id) {
    return deliveries.stream().filter(d -> id.equals(d.id())).toList();
  }

  @Override
  public void close() {
    vertx.close().await();
  }
}
