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
    try (TestNode node = new TestNode().set("HTTP_PORT", Integer.toString(port))
        .set("API_KEYS", "ops:admin:k-ops,acme:client:k-acme").set("REAPER_INTERVAL", "200ms")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .pipeline("later", "{'name':'later','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/delay','params':{'duration':'2h'}},{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .schedule("nightly", "{'pipeline':'order','owner':'acme','cron':'30 3 * * *','timeZone':'Europe/Paris'}")
        .start(new TestSteps().registry())) {
      for (int i = 0; i < 200; i++) {
        node.start("order", new JsonObject().put("i", i));
      }
      String sleeping = node.start("later", new JsonObject().put("wait", "long"));
      Eventually.until(Duration.ofSeconds(10), "the transaction to sleep",
          () -> String.valueOf(TestRedis.cmd("HGET", node.keys.stateH(sleeping), "processingState")), "sleeping"::equals);
      Path shots = Path.of("target", "dashboard");
      Files.createDirectories(shots);
      Process p = new ProcessBuilder("node", "dashboard.mjs", "http://127.0.0.1:" + port, "k-ops", sleeping,
          shots.toAbsolutePath().toString()).directory(browser.toFile()).redirectErrorStream(true).start();
      boolean ended = p.waitFor(120, TimeUnit.SECONDS);
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      System.out.println(output);
      assertTrue(ended, "the browser test did not end in 120 s: " + output);
      assertEquals(0, p.exitValue(), output);
      assertTrue(output.contains("dashboard: all checks passed"), output);
      assertTrue(output.contains("group paused and resumed, pipeline disabled and enabled"), output);
      assertTrue(output.contains("schedule paused and triggered from the page"), output);
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
