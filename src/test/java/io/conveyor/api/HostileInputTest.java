package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.TestCerts;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A hostile-input walk over the HTTP API: every route gets its valid request (which must succeed) and well over a
 * thousand mutations of it, seeded so a failure repeats. A misspelt or unknown field or query parameter must be
 * refused (4xx); no mutation may ever cause a 5xx.
 */
class HostileInputTest {
  private static final List<String> ODD_NAMES = List.of("__proto__", "constructor", "", " ", "💥", "a.b", "$where",
      "x".repeat(300));
  private HttpClient http;
  private final Random random = new Random(20261125);
  private final Map<String, Integer> seen = new TreeMap<>();
  private String base;
  private int requests;

  private record Route(String method, String path, JsonObject body) {
  }

  private int send(String method, String path, String body) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).header("Authorization", "Bearer k-ops")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    try {
      int status = http.send(b.build(), HttpResponse.BodyHandlers.ofString()).statusCode();
      requests++;
      seen.merge(status / 100 + "xx", 1, Integer::sum);
      assertTrue(status < 500, method + " " + path + " " + body + " answered " + status);
      return status;
    } catch (java.io.IOException | InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A misspelling of a name: a letter dropped, doubled, swapped with the next, or changed. */
  private String misspell(String name) {
    if (name.length() < 2) {
      return name + "x";
    }
    int i = random.nextInt(name.length() - 1);
    return switch (random.nextInt(4)) {
      case 0 -> name.substring(0, i) + name.substring(i + 1);
      case 1 -> name.substring(0, i + 1) + name.charAt(i) + name.substring(i + 1);
      case 2 -> name.substring(0, i) + name.charAt(i + 1) + name.charAt(i) + name.substring(i + 2);
      default -> name.substring(0, i) + (char) ('a' + random.nextInt(26)) + name.substring(i + 1);
    };
  }

  private Object oddValue() {
    return switch (random.nextInt(7)) {
      case 0 -> null;
      case 1 -> random.nextInt();
      case 2 -> new JsonArray().add(1).add("two");
      case 3 -> new JsonObject().put("nested", new JsonObject().put("deep", true));
      case 4 -> "";
      case 5 -> "y".repeat(5000);
      default -> random.nextDouble() * 1e300;
    };
  }

  /** A node on plain HTTP, or on HTTPS with a certificate of a test CA (security.http.tls) and a client trusting it. */
  private TestNode node(boolean tls, int port) throws java.io.IOException {
    TestNode node = new TestNode().set("HTTP_PORT", Integer.toString(port));
    if (!tls) {
      http = HttpClient.newHttpClient();
      base = "http://127.0.0.1:" + port;
      return node;
    }
    TestCerts certs = new TestCerts(java.nio.file.Files.createTempDirectory("hostile-tls"));
    TestCerts.Pair pair = certs.server("node", "node");
    http = HttpClient.newBuilder().sslContext(certs.trusting()).build();
    base = "https://127.0.0.1:" + port;
    return node.set("SECURITY_HTTP_TLS_CERT_FILE", pair.cert().toString())
        .set("SECURITY_HTTP_TLS_KEY_FILE", pair.key().toString());
  }

  @ParameterizedTest(name = "tls {0}")
  @ValueSource(booleans = {false, true})
  void a_thousand_mutated_requests_over_every_route_get_4xx_for_what_is_unknown_and_never_a_5xx(boolean tls)
      throws java.io.IOException {
    int port = TestRedis.freePort();
    try (TestNode node = node(tls, port)
        .set("API_KEYS", "ops:admin+client:k-ops")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/wait','params':{'switch':'go'}}]}")
        .start(new TestSteps().registry())) {
      String txId = node.transactions.start(new JsonObject().put("type", "order").put("owner", "ops"))
          .await().txId();
      JsonObject pipeline = new JsonObject("{\"name\":\"up\",\"nodeGroup\":\"master\",\"transactionType\":true,"
          + "\"steps\":[{\"type\":\"util/fixed-reply\",\"params\":{\"reply\":{}}}]}");
      List<Route> withBodies = List.of(
          new Route("POST", "/api/v1/transactions", new JsonObject().put("type", "order")
              .put("input", new JsonObject().put("n", 1)).put("metadata", new JsonObject()).put("priority", 3)),
          new Route("PUT", "/api/v1/transactions/" + txId + "/switches/other", new JsonObject().put("value", 1)),
          new Route("PUT", "/api/v1/pipelines/up", pipeline),
          new Route("PUT", "/api/v1/admin/schedules/daily", new JsonObject().put("pipeline", "order")
              .put("owner", "ops").put("cron", "0 7 * * *").put("timeZone", "UTC")),
          new Route("PUT", "/api/v1/admin/owners/acme", new JsonObject().put("weight", 2).put("maxConcurrency", 10)
              .put("rateLimit", "50/s")));
      List<String> bodyless = List.of("GET /api/v1/transactions/" + txId, "GET /api/v1/pipelines",
          "GET /api/v1/pipelines/order", "GET /api/v1/cluster", "GET /api/v1/stats", "GET /api/v1/admin/transactions",
          "GET /api/v1/admin/transactions/" + txId, "POST /api/v1/admin/transactions/" + txId + "/wake",
          "GET /api/v1/admin/groups/master", "GET /api/v1/admin/schedules", "GET /api/v1/transactions?externalId=x",
          "GET /api/v1/admin/owners", "GET /api/v1/admin/owners/acme");

      // each valid request succeeds as it is
      for (Route r : withBodies) {
        int status = send(r.method(), r.path(), r.body().encode());
        assertTrue(status / 100 == 2, r + " answered " + status);
      }
      int unknownFields = 0;
      for (int round = 0; round < 30; round++) {
        for (Route r : withBodies) {
          List<String> names = new ArrayList<>(r.body().fieldNames());
          // a misspelt field next to (or instead of) the right ones, and an odd name: refused, naming it
          JsonObject typo = r.body().copy();
          String name = names.get(random.nextInt(names.size()));
          String wrong = misspell(name);
          if (!names.contains(wrong)) {
            if (random.nextBoolean()) {
              typo.remove(name);
            }
            typo.put(wrong, typo.getValue(name, 1));
            assertEquals(400, send(r.method(), r.path(), typo.encode()), "misspelt " + wrong + " in " + r);
            unknownFields++;
          }
          JsonObject odd = r.body().copy().put(ODD_NAMES.get(random.nextInt(ODD_NAMES.size())), 1);
          assertEquals(400, send(r.method(), r.path(), odd.encode()), "odd field in " + r);
          unknownFields++;
          // a known field with a value of the wrong kind: refused or taken, never a 5xx
          send(r.method(), r.path(), r.body().copy().put(name, oddValue()).encode());
          // broken JSON and non-objects
          send(r.method(), r.path(), r.body().encode().substring(0, random.nextInt(r.body().encode().length())));
          send(r.method(), r.path(), random.nextBoolean() ? "[]" : "\"text\"");
          // a misspelt query parameter
          assertEquals(400, send(r.method(), r.path() + "?" + misspell("wait") + "x=1", r.body().encode()));
        }
        for (String line : bodyless) {
          String[] parts = line.split(" ");
          String sep = parts[1].contains("?") ? "&" : "?";
          assertEquals(400, send(parts[0], parts[1] + sep + misspell("limit") + "q=" + random.nextInt(), null),
              "unknown query parameter on " + line);
          // a wait that is no whole number of seconds (a valid one would hold the answer: that is not input)
          String badWait = List.of("abc", "-5", "1e3", "", "0x10", "1.5", "null", "[1]").get(random.nextInt(8));
          send(parts[0], parts[1] + sep + "wait=" + java.net.URLEncoder.encode(badWait,
              java.nio.charset.StandardCharsets.UTF_8), null);
        }
      }
      System.out.printf("hostile input walk (%s): %d requests, %d with an unknown or misspelt field; answers %s%n",
          base, requests, unknownFields, seen);
      assertTrue(requests >= 1000, requests + " requests");
    }
  }
}
