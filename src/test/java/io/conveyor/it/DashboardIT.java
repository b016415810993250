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
 * by .ci/run). Against a running node after a short load, it sees the nodes and the throughput chart, opens
 * a sleeping transaction's detail and cancels it. Screenshots go to target/dashboard/.
 */
class DashboardIT {
  @Test
  void the_dashboard_shows_the_cluster_cancels_a_sleeping_transaction_and_runs_it_again() throws Exception {
    Path browser = Path.of("src/test/browser");
    assertTrue(Files.isDirectory(browser.resolve("node_modules/playwright-core")),
        "playwright-core is missing: run npm install --prefix src/test/browser (as .ci/run does)");
    assertTrue(Files.isExecutable(Path.of("/usr/bin/chromium")), "Chromium is missing: apt-get install chromium");
    int port = TestRedis.freePort();
    TestSteps steps = new TestSteps();
    try (TestNode node = new TestNode().set("HTTP_PORT", Integer.toString(port))
        .set("API_KEYS", "ops:admin:k-ops,acme:client:k-acme").set("REAPER_INTERVAL", "200ms")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .pipeline("later", "{'name':'later','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/delay','params':{'duration':'2h'}},{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .pipeline("fragile", "{'name':'fragile','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/broken'}]}")
        .schedule("nightly", "{'pipeline':'order','owner':'acme','cron':'30 3 * * *','timeZone':'Europe/Paris'}")
        .start(steps.registry())) {
      // four that fail while the service is broken; it is mended before the page retries three of them
      steps.broken.set(true);
      List<String> fragile = new java.util.ArrayList<>();
      for (int i = 0; i < 4; i++) {
        fragile.add(node.start("fragile", new JsonObject().put("i", i)));
      }
      for (String id : fragile) {
        assertEquals("failed", node.awaitFinal(id).status().wire());
      }
      steps.broken.set(false);
      for (int i = 0; i < 200; i++) {
        node.start("order", new JsonObject().put("i", i));
      }
      String sleeping = node.start("later", new JsonObject().put("wait", "long"));
      Eventually.until(Duration.ofSeconds(10), "the transaction to sleep",
          () -> String.valueOf(TestRedis.cmd("HGET", node.keys.stateH(sleeping), "processingState")), "sleeping"::equals);
      Path shots = Path.of("target", "dashboard");
      Files.createDirectories(shots);
      String deadNode = "node-gone-" + Long.toHexString(System.nanoTime());
      Process p = new ProcessBuilder("node", "dashboard.mjs", "http://127.0.0.1:" + port, "k-ops", sleeping,
          shots.toAbsolutePath().toString(), deadNode).directory(browser.toFile()).redirectErrorStream(true).start();
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
      boolean ended = p.waitFor(120, TimeUnit.SECONDS);
      reader.join(5000);
      String output;
      synchronized (lines) {
        output = lines.toString();
      }
      System.out.println(output);
      assertTrue(ended, "the browser test did not end in 120 s: " + output);
      assertEquals(0, p.exitValue(), output);
      assertTrue(output.contains("dashboard: all checks passed"), output);
      assertTrue(output.contains("group paused and resumed, pipeline disabled and enabled"), output);
      assertTrue(output.contains("schedule paused and triggered from the page"), output);
      assertTrue(output.contains("node death shown after"), output);
      String retried = output.lines().filter(l -> l.startsWith("retried from a search: ")).findFirst()
          .orElseThrow().substring("retried from a search: ".length());
      List<String> three = List.of(retried.split(","));
      assertEquals(3, three.size(), output);
      for (String id : fragile) {
        assertEquals(three.contains(id) ? "success" : "failed", node.awaitFinal(id).status().wire(), id);
      }
      assertTrue(output.contains("events filtered by kind"), output);
      assertEquals("1", TestRedis.cmd("HGET", node.keys.scheduleH("nightly"), "paused").toString());
      assertEquals("running", node.transactions.group("master", "read", "test").await().state());
      // cancelled from the page, then run again from its start (Retry from start): it sleeps again, and its
      // cancelled run is kept
      io.conveyor.model.TxSummary after = node.transactions.status(sleeping, "acme").await();
      assertEquals("running", after.status().wire());
      assertEquals("cancelled", after.toJson().getJsonArray("runs").getJsonObject(0).getString("status"));
      for (String shot : List.of("dashboard.png", "detail.png", "cancelled.png")) {
        assertTrue(Files.size(shots.resolve(shot)) > 1000, shot);
      }
    }
  }
}
