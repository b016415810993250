package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxException;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.RedisClusterFixture;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle on a keyspace of six partitions over a real 3-master Redis Cluster: starts with and without
 * an externalId, children in another group (in their parent's partition), sleeps woken by switches, cancel,
 * and the archive, on two nodes of two groups; every script must run in one slot (a CROSSSLOT would fail it),
 * and the transactions' keys must spread over the masters.
 */
class PartitionedClusterIT {
  private static final Logger log = LoggerFactory.getLogger(PartitionedClusterIT.class);

  @Test
  @Timeout(180)
  void the_lifecycle_runs_on_six_partitions_and_its_keys_spread_over_the_masters() {
    try (RedisClusterFixture cluster = RedisClusterFixture.start(3, 1)) {
      TestSteps steps = new TestSteps();
      TestNode a = TestNode.withPrefix(TestRedis.newPrefix()).redis("cluster", cluster.endpoints(), "")
          .set("REDIS_PARTITIONS", "6").set("NODE_GROUP", "a").set("REAPER_INTERVAL", "100ms").set("ARCHIVE_DELAY", "2s")
          .set("ARCHIVE_INTERVAL", "200ms")
          .pipeline("parent", "{'name':'parent','nodeGroup':'a','transactionType':true,'steps':["
              + "{'type':'test/record'},{'type':'util/child-pipeline','params':{'pipeline':'child'}},"
              + "{'type':'test/record'}]}")
          .pipeline("child", "{'name':'child','nodeGroup':'b','steps':["
              + "{'type':'util/fixed-reply','params':{'reply':{'shipped':true}}}]}")
          .pipeline("approval", "{'name':'approval','nodeGroup':'a','transactionType':true,'steps':["
              + "{'type':'util/wait','params':{'switch':'approve','timeout':'1d'}},{'type':'test/record'}]}");
      TestNode b = a.sibling().set("NODE_GROUP", "b");
      try (a; b) {
        a.start(steps.registry());
        b.start(steps.registry());
        assertEquals(6, a.keys.partitions());

        // a client outside the nodes (the shell client's way) reads the layout and uses the partitions
        io.vertx.core.Vertx clientVertx = io.vertx.core.Vertx.vertx();
        try {
          io.conveyor.domain.Transactions cli = io.conveyor.ClientRoot.transactions(clientVertx, a.config());
          String cliTx = cli.start(new JsonObject().put("type", "parent").put("owner", "acme")
              .put("input", new JsonObject())).await().txId();
          assertEquals(TxStatus.SUCCESS, Eventually.until(Duration.ofSeconds(30), cliTx + " to finish",
              () -> cli.status(cliTx, "acme").await(), t -> t.status().isFinal()).status());
          io.conveyor.config.ConfigException other = org.junit.jupiter.api.Assertions.assertThrows(
              io.conveyor.config.ConfigException.class, () -> io.conveyor.ClientRoot.transactions(clientVertx,
                  a.sibling().set("REDIS_PARTITIONS", "5").config()));
          assertTrue(other.getMessage().contains("was made with 6 partition(s)"), other.getMessage());
        } finally {
          clientVertx.close().await();
        }

        List<String> parents = new ArrayList<>();
        Map<String, String> byExternalId = new HashMap<>();
        for (int i = 0; i < 40; i++) {
          JsonObject body = new JsonObject().put("type", "parent").put("owner", "acme").put("input",
              new JsonObject().put("i", i));
          if (i % 2 == 0) {
            body.put("externalId", "order-" + i);
          }
          TxSummary s = a.transactions.start(body).await();
          parents.add(s.txId());
          if (i % 2 == 0) {
            byExternalId.put("order-" + i, s.txId());
          }
        }
        // a second start with an externalId finds the first, whichever partition it is in
        byExternalId.forEach((ext, txId) -> {
          try {
            a.transactions.start(new JsonObject().put("type", "parent").put("owner", "acme").put("externalId", ext)
                .put("input", new JsonObject())).await();
            throw new AssertionError("a duplicate externalId was started: " + ext);
          } catch (TxException e) {
            assertEquals(txId, e.txId(), ext);
          }
        });
        List<String> waiting = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
          waiting.add(a.start("approval", new JsonObject().put("i", i)));
        }
        for (String txId : waiting) {
          Eventually.until(Duration.ofSeconds(20), txId + " to sleep on its switch",
              () -> a.store.reads.getState(txId).await().processingState(), "sleeping"::equals);
        }
        for (int i = 0; i < waiting.size(); i++) {
          if (i % 3 == 0) {
            a.transactions.cancel(waiting.get(i), "acme").await();
          } else {
            a.transactions.setSwitch(waiting.get(i), "acme", "approve", "yes").await();
          }
        }

        Set<Integer> partitions = new TreeSet<>();
        for (String txId : parents) {
          partitions.add(a.keys.partitionOf(txId));
          TxSummary s = Eventually.until(Duration.ofSeconds(30), txId + " to finish",
              () -> a.transactions.status(txId, "acme").await(), t -> t.status().isFinal());
          assertEquals(TxStatus.SUCCESS, s.status(), txId + ": " + s.note());
          assertEquals(new JsonObject().put("shipped", true).put("recorded", true), s.output());
        }
        for (int i = 0; i < waiting.size(); i++) {
          String txId = waiting.get(i);
          TxSummary s = Eventually.until(Duration.ofSeconds(30), txId + " to finish",
              () -> a.transactions.status(txId, "acme").await(), t -> t.status().isFinal());
          assertEquals(i % 3 == 0 ? TxStatus.CANCELLED : TxStatus.SUCCESS, s.status(), txId + ": " + s.note());
        }
        assertTrue(partitions.size() >= 4, "40 starts landed in only " + partitions);

        // while they wait for the archive, each master holds some of the transactions' keys
        Map<Integer, Integer> stateKeys = new HashMap<>();
        for (int port : cluster.masterPorts()) {
          String keys = cluster.cmd(port, "--scan", "--pattern", a.prefix + "*stateH:*");
          stateKeys.put(port, (int) keys.lines().filter(l -> !l.isBlank()).count());
        }
        log.info("stateH keys per master (port → count) before archiving: {}", stateKeys);

        // then the archive leaders of every partition take them all out of Redis
        for (String txId : parents) {
          Eventually.until(Duration.ofSeconds(30), txId + " to leave Redis for the archive",
              () -> a.store.reads.getState(txId).await(), s -> s == null);
          assertEquals(TxStatus.SUCCESS, a.transactions.status(txId, "acme").await().status(), "read from the archive");
        }
      }
    }
  }
}
