package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core (src/test/browser, installed
 * by .ci/run). Against a running node holding 2,000 live transactions and a few failed ones older than them, it
 * finds an archived one in Recent, searches for the failed, opens one in place (visible without scrolling), reads
 * its timeline, opens a child from its tree, retries it and sees it go green by a pushed completion with its failed
 * run in the timeline's earlier runs, reads a compensation's row, wakes a sleeper and sets the switch another waits
 * for (their input and output folded until opened), works the overview's controls, sees work held back by a rate
 * limit listed as stuck (its step counted from 1), sends the event a transaction awaits (a human approval) and sees
 * it go on, draws a
 * pipeline's two versions side by side with each step's numbers, a canary's rollout beside its stable version
 * (rolled back from the page), finds the retries in the audit view, checks every view's text contrast (WCAG AA) and
 * that its actions are reached by Tab, and fits 390 px and 1920 px screens. Overlapping reads draw latest-wins: a
 * poll's answer read before a pause and held past it is dropped, a redraw keeps the buttons that read the same, More clicked twice asks for one page, and with the
 * bridge down detail reads slower than the 3 s poll still draw. Screenshots go to target/dashboard/
 * (those of docs/console/ were taken from there).
 */
class DashboardIT {
  private static final String PRICED = "{'name':'priced','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'util/fixed-reply','params':{'reply':{'price':1}}},{'type':'util/fixed-reply','params':{'reply':{}}}]}";
  private static final String CANARIED = "{'name':'canaried','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'util/fixed-reply','params':{'reply':{'v':1}}}]}";
  private static final String RETRYING = "'retry':{'maxAttempts':3,'initialInterval':'100ms','maxInterval':'100ms'}";

  @Test
  void an_operator_finds_a_failed_transaction_reads_its_life_and_retries_it_live() throws Exception {
    Path browser = Path.of("src/test/browser");
    assertTrue(Files.isDirectory(browser.resolve("node_modules/playwright-core")),
        "playwright-core is missing: run npm install --prefix src/test/browser (as .ci/run does)");
    assertTrue(Files.isExecutable(Path.of("/usr/bin/chromium")), "Chromium is missing: apt-get install chromium");
    int port = TestRedis.freePort();
    TestSteps steps = new TestSteps();
    try (TestNode node = new TestNode().set("HTTP_PORT", Integer.toString(port))
        .set("API_KEYS", "ops:admin:k-ops,acme:client:k-acme").set("REAPER_INTERVAL", "200ms")
        .set("REAPER_STUCK_HELD_AFTER", "1s")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .pipeline("later", "{'name':'later','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/delay','params':{'duration':'2h'}},{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .pipeline("fragile", "{'name':'fragile','nodeGroup':'master','transactionType':true," + RETRYING + ",'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'prepared':true}}},{'type':'test/broken'}]}")
        .pipeline("throttled", "{'name':'throttled','nodeGroup':'master','transactionType':true,'rateLimit':'1/h',"
            + "'steps':[{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .pipeline("fan", "{'name':'fan','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/parallel','params':{'branches':[{'pipeline':'order'},{'pipeline':'fragile'}]}}]}")
        .pipeline("approval", "{'name':'approval','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/await','params':{'event':'order.approved','key':'${input.orderId}','timeout':'1h'}}]}")
        .pipeline("charged", "{'name':'charged','nodeGroup':'master','transactionType':true,'onFailure':'refund',"
            + "'steps':[{'type':'util/fail','params':{'note':'the card was declined'}}]}")
        .pipeline("refund", "{'name':'refund','nodeGroup':'master','steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'refunded':true}}}]}")
        .pipeline("gated", "{'name':'gated','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/wait','params':{'switch':'go','timeout':'1h'}}]}")
        .pipeline("priced", PRICED)
        .pipeline("canaried", CANARIED)
        .schedule("nightly", "{'pipeline':'order','owner':'acme','cron':'30 3 * * *','timeZone':'Europe/Paris'}")
        .start(steps.registry())) {
      // four that fail (each after three attempts) while the service is broken, and a parent whose branch does;
      // the service is mended before the page retries three of them. They are older than the 2,000 live ones
      // started next, so a search that walked newest first and filtered after would answer an empty first page.
      steps.broken.set(true);
      List<String> fragile = new java.util.ArrayList<>();
      for (int i = 0; i < 4; i++) {
        fragile.add(node.start("fragile", new JsonObject().put("i", i)));
      }
      String fan = node.start("fan", new JsonObject().put("fan", true));
      // one that fails and is compensated (onFailure: refund): its timeline has a compensation row
      String charged = node.start("charged", new JsonObject().put("card", "4242"));
      for (String id : fragile) {
        assertEquals("failed", node.awaitFinal(id).status().wire());
      }
      assertEquals("failed", node.awaitFinal(fan).status().wire());
      assertEquals("failed", node.awaitFinal(charged).status().wire());
      Eventually.until(Duration.ofSeconds(10), "the refund to end", () -> node.transactions.status(charged, "acme")
          .await().toJson().getJsonObject("compensation"), c -> c != null && "success".equals(c.getString("status")));
      steps.broken.set(false);
      // many live ones, newer than the failures (they sleep for hours)
      for (int i = 0; i < 2000; i++) {
        node.start("later", new JsonObject().put("i", i));
      }
      for (int i = 0; i < 200; i++) {
        node.start("order", new JsonObject().put("i", i));
      }
      String sleeping = node.start("later", new JsonObject().put("wait", "long"));
      // one the page wakes, and one waiting for the switch the page sets
      String wakeable = node.start("later", new JsonObject().put("wake", "me"));
      String gated = node.start("gated", new JsonObject().put("gate", 1));
      for (String id : List.of(sleeping, wakeable, gated)) {
        Eventually.until(Duration.ofSeconds(10), id + " to sleep",
            () -> String.valueOf(TestRedis.cmd("HGET", node.keys.stateH(id), "processingState")), "sleeping"::equals);
      }
      // one hour's one start of throttled runs; the next is held back by its rate limit, and is listed stuck
      node.awaitFinal(node.start("throttled", new JsonObject()));
      String held = node.start("throttled", new JsonObject().put("held", true));
      // one waiting for an approval the page sends; a pipeline with two versions, each run a few times
      String orderId = "o-" + Long.toHexString(System.nanoTime());
      String approval = node.start("approval", new JsonObject().put("orderId", orderId));
      Eventually.until(Duration.ofSeconds(10), "the approval to wait", () -> String.valueOf(
          TestRedis.cmd("HGET", node.keys.stateH(approval), "processingState")), "sleeping"::equals);
      secondVersion(port, 3, node);
      int[] split = canary(port, 8, node);
      String archived = archivedNow(node);
      Path shots = Path.of("target", "dashboard");
      Files.createDirectories(shots);
      String deadNode = "node-gone-" + Long.toHexString(System.nanoTime());
      JsonObject seed = new JsonObject().put("base", "http://127.0.0.1:" + port).put("key", "k-ops")
          .put("sleeping", sleeping).put("out", shots.toAbsolutePath().toString()).put("deadNode", deadNode)
          .put("fan", fan).put("held", held).put("fragile", new io.vertx.core.json.JsonArray(fragile))
          .put("approval", approval).put("orderId", orderId).put("canaryStarts", split[0])
          .put("stableStarts", split[1]).put("charged", charged).put("wakeable", wakeable).put("gated", gated)
          .put("archived", archived);
      Process p = new ProcessBuilder("node", "dashboard.mjs", seed.encode()).directory(browser.toFile())
          .redirectErrorStream(true).start();
      StringBuilder lines = new StringBuilder();
      Thread reader = new Thread(() -> {
        try (var in = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
            StandardCharsets.UTF_8))) {
          for (String line; (line = in.readLine()) != null; ) {
            synchronized (lines) {
              lines.append(line).append('\n');
            }
            if (line.equals("ready for a node death")) {
              // registered, with no heartbeat: the reaper judges it dead at its next look
              TestRedis.cmd("ZADD", node.keys.nodesZ(), 1, deadNode);
            }
          }
        } catch (java.io.IOException e) {
          // the process ended
        }
      });
      reader.start();
      boolean ended = p.waitFor(180, TimeUnit.SECONDS);
      reader.join(5000);
      String output;
      synchronized (lines) {
        output = lines.toString();
      }
      System.out.println(output);
      assertTrue(ended, "the browser test did not end in 180 s: " + output);
      assertEquals(0, p.exitValue(), output);
      assertTrue(output.contains("dashboard: all checks passed"), output);
      assertTrue(output.contains("group paused and resumed, pipeline disabled and enabled"), output);
      // a poll's answer read before the pause and come back after it was dropped, not drawn over the pause
      assertTrue(output.contains("a read from before the pause dropped: still paused"), output);
      // a redraw keeps the rows and cells that read the same, so a button is not swapped under a click
      assertTrue(output.contains("a redraw keeps the buttons: 3 of 3"), output);
      // More clicked twice at once appends the next page once
      assertTrue(output.contains("More clicked twice: one page asked for, "), output);
      // with the bridge down, detail reads slower than the 3 s poll still draw
      assertTrue(output.contains("slow detail reads drawn with the bridge down: "), output);
      assertTrue(output.contains("schedule paused and triggered from the page"), output);
      assertTrue(output.contains("node death shown after"), output);
      // a badge per partition where there are several (CONVEYOR_TEST_REDIS_PARTITIONS), none with one
      assertTrue(output.contains(node.keys.partitions() > 1 ? node.keys.partitions() + " partition badges: "
          : "one partition: no partition badges"), output);
      assertTrue(output.contains("child opened from the tree"), output);
      assertTrue(output.contains("no sideways scroll at 390 px"), output);
      assertTrue(output.contains("pipelines drawn: fan → order, fragile"), output);
      // retried from its detail (the first) and from a search (the next two): those succeed, the last stays failed
      for (int i = 0; i < fragile.size(); i++) {
        assertEquals(i < 3 ? "success" : "failed", node.awaitFinal(fragile.get(i)).status().wire(), fragile.get(i));
      }
      assertTrue(output.contains("events filtered by kind"), output);
      assertTrue(output.contains("stuck listed: Stuck: 1 held"), output);
      assertTrue(output.contains("last hour: master completed ") && output.contains(", charts 2, p50 "), output);
      assertEquals("1", TestRedis.cmd("HGET", node.keys.scheduleH("nightly"), "paused").toString());
      assertEquals("running", node.transactions.group("master", "read", "test").await().state());
      // cancelled from the page, then run again from step 1: it sleeps again, and its
      // cancelled run is kept
      io.conveyor.model.TxSummary after = node.transactions.status(sleeping, "acme").await();
      assertEquals("running", after.status().wire());
      assertEquals("cancelled", after.toJson().getJsonArray("runs").getJsonObject(0).getString("status"));
      // woken from the page: it left its 2 h sleep and ran its last step; the switch set from the page let gated on
      assertEquals("success", node.awaitFinal(wakeable).status().wire());
      JsonObject opened = node.awaitFinal(gated).toJson();
      assertEquals(Boolean.TRUE, opened.getJsonObject("output").getValue("go"), opened.encode());
      for (String said : List.of("first page of failed: ", "earlier runs: run 1 ended failed at step 2",
          "earlier runs after the cancel: run 1 ended cancelled at step 1", "compensation row: refund success",
          "folded JSON: input and output closed", "woken from the page: success", "switch set from the page: go = true",
          "recent lists the archived ", "stuck details: step 1")) {
        assertTrue(output.contains(said), said + ": " + output);
      }
      // the approval sent from the page: its flow/await took the event and the transaction ended with it
      JsonObject approved = node.awaitFinal(approval).toJson();
      assertEquals("success", approved.getString("status"));
      assertEquals("ops", approved.getJsonObject("output").getJsonObject("event").getJsonObject("payload")
          .getString("approvedBy"), approved.encode());
      assertTrue(output.contains("event sent from the page: Sent event"), output);
      assertTrue(output.contains("rollout shown: canary " + split[0] + " started, " + split[0] + " failed | stable "
          + split[1] + " started, 0 failed; rolled back from the page"), output);
      assertEquals("rolledback", TestRedis.cmd("HGET", node.keys.pipelineH("canaried"), "rollout").toString());
      assertTrue(output.contains("versions side by side: left: same,diff-changed | right: same,diff-changed,diff-added"),
          output);
      for (String view : List.of("the overview", "a failed transaction's detail", "a detail awaiting an event",
          "the confirmation dialog", "a pipeline drawn", "two versions side by side", "a rollout")) {
        assertTrue(output.contains("contrast ok in " + view + ": "), view + ": " + output);
      }
      assertTrue(output.contains("overview reached by Tab"), output);
      for (String shot : List.of("overview.png", "search.png", "tree.png", "detail.png", "retried.png",
          "pipeline.png", "phone-overview.png", "phone-detail.png", "awaiting.png", "awaited.png", "versions.png", "phone-awaiting.png", "rollout.png")) {
        assertTrue(Files.size(shots.resolve(shot)) > 1000, shot);
      }
    }
  }

  /**
   * Runs an order and has the archive take it at once (due now in toArchiveZ, where archive.delay would keep it a
   * minute): answers its txId once Redis no longer holds it and the archive does.
   */
  private static String archivedNow(TestNode node) {
    String txId = node.start("order", new JsonObject().put("archive", "now"));
    node.awaitFinal(txId);
    TestRedis.cmd("ZADD", node.keys.toArchiveZ(node.keys.partitionOf(txId)), "XX", 0, txId);
    Eventually.until(Duration.ofSeconds(20), txId + " to be archived", () -> TestRedis.cmd("EXISTS",
        node.keys.stateH(txId)).toInteger() == 0 && node.node().archive().find(txId).await() != null, b -> b);
    return txId;
  }

  /**
   * Uploads canaried's second version as a canary taking half of new starts, one that fails, and starts n: answers
   * {on the canary (they failed), on the stable (they succeeded)}.
   */
  private static int[] canary(int port, int n, TestNode node) throws Exception {
    JsonObject v2 = new JsonObject(CANARIED.replace('\'', '"')).put("rollout", new JsonObject().put("share", 50));
    v2.getJsonArray("steps").set(0, new JsonObject().put("type", "util/fail"));
    java.net.http.HttpResponse<String> put = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest
        .newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/api/v1/pipelines/canaried"))
        .header("Authorization", "Bearer k-ops").header("Content-Type", "application/json")
        .PUT(java.net.http.HttpRequest.BodyPublishers.ofString(v2.encode())).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(200, put.statusCode(), put.body());
    int failed = 0;
    for (int i = 0; i < n; i++) {
      failed += node.awaitFinal(node.start("canaried", new JsonObject())).status().wire().equals("failed") ? 1 : 0;
    }
    return new int[] {failed, n - failed};
  }

  /** Runs priced n times, uploads its second version (step 2 changed, a step 3 added) and runs that twice. */
  private static void secondVersion(int port, int n, TestNode node) throws Exception {
    for (int i = 0; i < n; i++) {
      node.awaitFinal(node.start("priced", new JsonObject()));
    }
    JsonObject v2 = new JsonObject(PRICED.replace('\'', '"'));
    v2.getJsonArray("steps").getJsonObject(1).getJsonObject("params").put("reply", new JsonObject().put("v", 2));
    v2.getJsonArray("steps").add(new JsonObject().put("type", "util/fixed-reply")
        .put("params", new JsonObject().put("reply", new JsonObject().put("shipped", true))));
    java.net.http.HttpResponse<String> put = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest
        .newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/api/v1/pipelines/priced"))
        .header("Authorization", "Bearer k-ops").header("Content-Type", "application/json")
        .PUT(java.net.http.HttpRequest.BodyPublishers.ofString(v2.encode())).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(200, put.statusCode(), put.body());
    for (int i = 0; i < 2; i++) {
      node.awaitFinal(node.start("priced", new JsonObject()));
    }
  }
}
