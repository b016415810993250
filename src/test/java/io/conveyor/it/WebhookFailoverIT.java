package io.conveyor.it;

import io.conveyor.ClientRoot;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.domain.Transactions;
import io.conveyor.config.ConfigLoader;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.NodeProcess;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.WebhookReceiver;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two node processes deliver the webhooks of 1,000 transactions; the webhook leader is killed with SIGKILL
 * mid-run. Every transaction's webhook still arrives (at least once); the duplicates are counted.
 */
class WebhookFailoverIT {
  private static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString("failover-secret-0123456789".getBytes());
  private final String prefix = TestRedis.newPrefix();
  private final List<NodeProcess> nodes = new ArrayList<>();
  private final WebhookReceiver receiver = new WebhookReceiver(SECRET);

  @AfterEach
  void cleanUp() {
    nodes.forEach(NodeProcess::close);
    receiver.close();
    TestRedis.drop(prefix);
  }

  @Test
  void killing_the_webhook_leader_mid_run_loses_no_delivery() throws Exception {
    Path pipelines = Files.createTempDirectory("pipelines");
    Files.writeString(pipelines.resolve("order.json"), ("{'name':'order','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'done':true}}}]}").replace('\'', '"'));
    Map<String, String> env = new HashMap<>(Map.of("CONVEYOR_REDIS_URL", TestRedis.url(), "CONVEYOR_REDIS_PREFIX",
        prefix, "CONVEYOR_CLUSTER_ENABLED", "false", "CONVEYOR_PIPELINES_DIR", pipelines.toString(),
        "CONVEYOR_HTTP_PORT", "0", "CONVEYOR_WEBHOOKS_SECRET", SECRET, "CONVEYOR_WEBHOOKS_ALLOW_HOSTS", "127.0.0.1",
        "CONVEYOR_WEBHOOKS_LEASE", "2s", "CONVEYOR_WEBHOOKS_GRACE", "1s", "CONVEYOR_WEBHOOKS_TIMEOUT", "2s"));
    env.put("CONVEYOR_WEBHOOKS_INTERVAL", "100ms");
    // a delivery that timed out on a loaded machine is tried again within a second or two, not after minutes
    env.put("CONVEYOR_WEBHOOKS_INITIAL_DELAY", "500ms");
    env.put("CONVEYOR_WEBHOOKS_MAX_DELAY", "2s");
    env.put("CONVEYOR_ARCHIVE_URL", "h2:target/webhook-failover-" + prefix.replace(":", "") + "/archive");
    // slow answers keep deliveries in flight, so the kill interrupts some
    receiver.delay(20);
    for (int i = 0; i < 2; i++) {
      NodeProcess n = NodeProcess.start("webhook-failover-" + i, env);
      nodes.add(n);
      n.awaitLine(" started: group master", Duration.ofSeconds(60));
    }
    Vertx vertx = Vertx.vertx();
    try {
      Transactions tx = ClientRoot.transactions(vertx, ConfigLoader.load(null, env));
      // one start at a time, from this thread: a Transactions client is meant for one thread at a time. The
      // leader is killed while the starts still come (after 300, once 100 were delivered), so it dies mid-run
      // however fast the deliveries keep up with the starts
      List<String> ids = new ArrayList<>();
      int atKill = -1;
      for (int i = 0; i < 1000; i++) {
        ids.add(tx.start(new JsonObject().put("type", "order").put("owner", "acme").put("input", new JsonObject())
            .put("webhook", receiver.url("/failover"))).await().txId());
        if (i == 299) {
          Eventually.until(Duration.ofSeconds(30), "some deliveries", () -> receiver.deliveries().size(),
              n -> n >= 100);
          String leaderId = String.valueOf(TestRedis.cmd("GET", prefix + "webhookLock1"));
          NodeProcess leader = nodes.stream().filter(n -> n.lines().stream().anyMatch(l -> l.contains(leaderId)))
              .findFirst().orElseThrow();
          leader.kill();
          atKill = receiver.deliveries().size();
        }
      }
      Eventually.until(Duration.ofSeconds(60), "every webhook delivered", () -> ids.stream()
          .filter(id -> receiver.of(id).isEmpty()).count(), n -> n == 0);
      long duplicates = receiver.deliveries().size() - ids.size();
      System.out.printf("webhook failover: %d delivered before the kill, %d transactions, %d deliveries, "
          + "%d duplicates%n", atKill, ids.size(), receiver.deliveries().size(), duplicates);
      assertTrue(receiver.deliveries().stream().allMatch(WebhookReceiver.Delivery::verified));
      assertTrue(atKill < ids.size(), "the leader died mid-run");
      for (String id : ids) {
        assertTrue(receiver.of(id).size() >= 1, id);
      }
      assertEquals(ids.size() + duplicates, receiver.deliveries().size());
    } finally {
      vertx.close().await();
    }
  }
}
