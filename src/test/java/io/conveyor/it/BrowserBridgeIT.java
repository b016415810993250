package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The SockJS event-bus bridge from a web page in Debian's Chromium, with @vertx/eventbus-bridge-client.js
 * (src/test/browser/bridge.mjs and bridge.html, installed by .ci/run): the page registers for its owner's
 * completions, starts a transaction with its client key, hears it complete, and finds a wrong key refused.
 */
class BrowserBridgeIT {
  @Test
  void a_web_page_starts_a_transaction_and_hears_its_completion_through_the_sockjs_bridge() throws Exception {
    Path browser = Path.of("src/test/browser");
    for (String module : new String[] {"playwright-core", "sockjs-client", "@vertx/eventbus-bridge-client.js"}) {
      assertTrue(Files.isDirectory(browser.resolve("node_modules").resolve(module)),
          module + " is missing: run npm install --prefix src/test/browser (as .ci/run does)");
    }
    assertTrue(Files.isExecutable(Path.of("/usr/bin/chromium")), "Chromium is missing: apt-get install chromium");
    int port = TestRedis.freePort();
    try (TestNode node = new TestNode().set("HTTP_PORT", Integer.toString(port))
        .set("API_KEYS", "acme:client:k-acme,ops:admin:k-ops")
        .pipeline("slow", "{'name':'slow','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/delay','params':{'duration':'300ms'}},{'type':'util/fixed-reply','params':{'reply':"
            + "{'ok':true}}}]}")
        .start(new TestSteps().registry())) {
      // the page comes from a web server of its own, as a web app's would
      io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
      java.util.Map<String, Path> files = java.util.Map.of("/page.html", browser.resolve("bridge.html"),
          "/js/sockjs.min.js", browser.resolve("node_modules/sockjs-client/dist/sockjs.min.js"),
          "/js/vertx-eventbus.js", browser.resolve("node_modules/@vertx/eventbus-bridge-client.js/vertx-eventbus.js"));
      int pagePort = vertx.createHttpServer().requestHandler(req -> {
        Path file = files.get(req.path());
        if (file == null) {
          req.response().setStatusCode(404).end();
        } else {
          req.response().putHeader("content-type", req.path().endsWith(".html") ? "text/html" : "text/javascript")
              .sendFile(file.toString());
        }
      }).listen(0, "127.0.0.1").await().actualPort();
      String page = "http://127.0.0.1:" + pagePort + "/page.html?bus="
          + java.net.URLEncoder.encode("http://127.0.0.1:" + port + "/eventbus", StandardCharsets.UTF_8)
          + "&key=k-acme&owner=acme";
      Process p;
      try {
        p = new ProcessBuilder("node", "bridge.mjs", page).directory(browser.toFile()).redirectErrorStream(true)
            .start();
      } catch (java.io.IOException e) {
        vertx.close();
        throw e;
      }
      boolean ended = p.waitFor(90, TimeUnit.SECONDS);
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      vertx.close().await();
      System.out.println(output);
      assertTrue(ended, "the browser test did not end in 90 s: " + output);
      assertEquals(0, p.exitValue(), output);
      String line = output.lines().filter(l -> l.startsWith("result: ")).findFirst().orElseThrow(
          () -> new AssertionError("no result line: " + output));
      JsonObject result = new JsonObject(line.substring("result: ".length()));
      String txId = result.getString("txId");
      assertEquals("acme", result.getString("startOwner"), "the start acts for the key's owner");
      assertEquals(new JsonObject().put("txId", txId).put("status", "success"), result.getJsonObject("completion"));
      JsonObject refusal = result.getJsonObject("refusal");
      assertEquals(403, refusal.getInteger("failureCode"), refusal.encode());
      assertTrue(refusal.getString("message").startsWith("access_denied: conveyor.tx.start: "), refusal.encode());
      // the browser's transaction is a real one, with the input the page sent
      assertTrue(output.contains("websocket: ws://127.0.0.1:" + port + "/eventbus/"), "over a WebSocket: " + output);
      assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
      assertEquals(new JsonObject().put("from", "browser"),
          new JsonObject(TestRedis.cmd("HGET", node.keys.stateH(txId), "input").toString()));
    }
  }
}
