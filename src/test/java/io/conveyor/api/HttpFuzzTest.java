package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Hostile and malformed requests over raw HTTP/1.1: every answer is a 4xx problem+json, Redis keeps no trace
 * of them, and the node goes on serving. The cases are generated from a fixed seed, so a failure repeats.
 */
class HttpFuzzTest {
  private TestNode node;
  private int port;

  @BeforeEach
  void startNode() {
    port = TestRedis.freePort();
    node = new TestNode().set("HTTP_PORT", Integer.toString(port)).set("HTTP_MAX_BODY_BYTES", "65536")
        .set("API_KEYS", "acme:client:k-acme,ops:admin:k-ops")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .start(new TestSteps().registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private record Case(String method, String path, String key, String contentType, byte[] body) {
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static List<Case> cases() {
    Random random = new Random(42);
    String tx = "/api/v1/transactions";
    String someTx = "/api/v1/transactions/tx-" + "0".repeat(32);
    List<byte[]> bodies = new ArrayList<>(List.of(
        utf8(""), utf8("null"), utf8("[]"), utf8("42"), utf8("\"text\""), utf8("{"), utf8("{\"type\":"),
        utf8("{\"type\":5}"), utf8("{\"type\":null}"), utf8("{\"type\":\"order\",\"input\":[]}"),
        utf8("{\"type\":\"order\",\"input\":\"x\"}"), utf8("{\"type\":\"order\",\"metadata\":7}"),
        utf8("{\"type\":\"order\",\"externalId\":\"\"}"), utf8("{\"type\":\"order\",\"externalId\":" + 5 + "}"),
        utf8("{\"type\":\"" + "t".repeat(5000) + "\"}"), utf8("{\"type\":\"../../etc\"}"),
        utf8("{\"type\":\"order\",\"input\":" + "[".repeat(3000) + "]".repeat(3000) + "}"),
        utf8("{\"type\":\"order\",\"input\":{\"a\":\"" + "x".repeat(70_000) + "\"}}"),
        utf8("{\"type\":\"nope\"}"), utf8("{\"type\":\"order\",\"externalId\":\"" + "e".repeat(300) + "\"}"),
        new byte[] {'{', '"', 't', 'y', 'p', 'e', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'},
        new byte[] {(byte) 0xFF, (byte) 0xFE, 0, 0}));
    for (int i = 0; i < 20; i++) {
      byte[] junk = new byte[random.nextInt(200)];
      random.nextBytes(junk);
      bodies.add(junk);
    }
    List<Case> out = new ArrayList<>();
    for (byte[] b : bodies) {
      out.add(new Case("POST", tx, "k-acme", "application/json", b));
      out.add(new Case("PUT", someTx + "/switches/go", "k-acme", "application/json", b));
      out.add(new Case("POST", tx, "k-acme", random.nextBoolean() ? "text/plain" : "application/xml", b));
      out.add(new Case("PUT", "/api/v1/pipelines/x", "k-ops", "application/json", b));
    }
    String[] paths = {someTx, "/api/v1/transactions/tx-1", "/api/v1/transactions/%00", "/api/v1/transactions/..%2F..",
        "/api/v1/transactions/" + "a".repeat(3000), tx + "?externalId=", tx + "?externalId=nope", tx + "?wait=abc",
        someTx + "?wait=-5", someTx + "/cancel", "/api/v1/../health/live", "/api/v1/nothing", "/api/v2/transactions",
        "/api/v1/pipelines/nope", "/api/v1/transactions/tx-" + "0".repeat(32) + "/switches/" + "n".repeat(100)};
    String[] keys = {null, "", "wrong", "k-acme ", "Basic abc", "k-ops"};
    for (String p : paths) {
      for (String k : keys) {
        out.add(new Case(p.endsWith("/cancel") ? "POST" : "GET", p, k, null, null));
      }
    }
    return out;
  }

  /** One raw request; answers the status line's code and the rest of the response. */
  private String[] send(Case c) throws IOException {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      ByteArrayOutputStream req = new ByteArrayOutputStream();
      req.write(utf8(c.method() + " " + c.path() + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"));
      if (c.key() != null) {
        req.write(utf8((c.key().startsWith("Basic") ? "Authorization: " : "Authorization: Bearer ") + c.key()
            + "\r\n"));
      }
      if (c.contentType() != null) {
        req.write(utf8("Content-Type: " + c.contentType() + "\r\n"));
      }
      byte[] body = c.body() == null ? new byte[0] : c.body();
      req.write(utf8("Content-Length: " + body.length + "\r\n\r\n"));
      req.write(body);
      OutputStream out = s.getOutputStream();
      out.write(req.toByteArray());
      out.flush();
      InputStream in = s.getInputStream();
      String response = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return new String[] {response.substring(9, 12), response};
    }
  }

  @Test
  void hostile_requests_get_4xx_problems_leave_no_trace_and_the_node_keeps_serving() throws IOException {
    List<String> before = TestRedis.traces(node.prefix).stream().sorted().toList();
    List<Case> cases = cases();
    assertTrue(cases.size() >= 200, cases.size() + " cases");
    for (Case c : cases) {
      String[] r = send(c);
      int status = Integer.parseInt(r[0]);
      String what = c.method() + " " + c.path().substring(0, Math.min(80, c.path().length())) + " → " + r[1]
          .substring(0, Math.min(300, r[1].length()));
      assertTrue(status >= 400 && status < 500, what);
      assertTrue(r[1].toLowerCase().contains("content-type: application/problem+json"), what);
    }
    // the rate bucket counts attempts; nothing else was written
    assertEquals(before, TestRedis.traces(node.prefix).stream().filter(k -> !k.contains(":rateH:")).sorted().toList());
    String[] ok = send(new Case("POST", "/api/v1/transactions", "k-acme", "application/json",
        utf8(new JsonObject().put("type", "order").encode())));
    assertEquals("202", ok[0]);
  }
}
