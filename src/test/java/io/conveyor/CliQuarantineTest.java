package io.conveyor;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.redis.ArchiveHandoff.ToArchive;
import io.conveyor.redis.QuarantineStore.Refused;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** conveyor archive-quarantine: list, retry and drop from the command line. */
class CliQuarantineTest {
  private TestNode node;

  @BeforeEach
  void startNode() {
    // no archive leader: a retried entry is due at once, and a leader's next round would take it from toArchiveZ
    node = new TestNode().set("NODE_ROLES", "dequeue,api").pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
        + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}").start(new TestSteps().registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private CliRun cli(String... args) {
    return CliRun.of(node.config(), args);
  }

  private String quarantined() {
    String txId = node.start("order", new JsonObject());
    node.awaitFinal(txId);
    var stamp = cmd("HMGET", node.keys.stateH(txId), "updated", "rev");
    String handed = stamp.get(0) + "/" + (stamp.get(1) == null ? "0" : stamp.get(1).toString());
    node.store.quarantine.setAside(node.keys.partitionOf(txId), "node-test", List.of(new Refused(
        new ToArchive(txId, handed, new JsonObject()), "new row violates check constraint", "23514"))).await();
    return txId;
  }

  @Test
  void list_shows_each_quarantined_transaction_with_the_databases_message() {
    assertTrue(cli("archive-quarantine", "list").out().contains("nothing is quarantined"));
    String txId = quarantined();
    CliRun list = cli("archive-quarantine", "list");
    assertEquals(0, list.code(), list.err());
    assertTrue(list.out().startsWith(txId) && list.out().contains("23514")
        && list.out().contains("violates check constraint"), list.out());
    JsonObject line = new JsonObject(cli("archive-quarantine", "list", "--json").out().strip());
    assertEquals(txId, line.getString("txId"));
    assertEquals(2, cli("archive-quarantine", "list", "--limit", "0").code(), "a limit out of range is bad usage");
  }

  @Test
  void retry_makes_it_due_and_drop_deletes_it_and_a_second_time_is_refused() {
    String again = quarantined();
    String gone = quarantined();
    assertEquals(0, cli("archive-quarantine", "retry", again).code());
    assertNotNull(cmd("ZSCORE", node.keys.toArchiveZ(node.keys.partitionOf(again)), again));
    assertEquals(1, cli("archive-quarantine", "retry", again).code(), "no longer quarantined");
    assertEquals(0, cli("archive-quarantine", "drop", gone).code());
    assertEquals(0, cmd("EXISTS", node.keys.stateH(gone)).toLong());
    assertEquals(1, cli("archive-quarantine", "drop", gone).code());
    assertEquals(2, cli("archive-quarantine", "drop", "tx-nope").code());
    assertEquals(2, cli("archive-quarantine", "forget", gone).code());
  }
}
