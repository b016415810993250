package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.conveyor.domain.Search;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The phase indexes (phaseZ:ended, phaseZ:retrying, phaseZ:waiting) a failed, retrying or waiting search walks
 * instead of every live transaction: the scripts that bring a transaction into such a phase add it by its created
 * time; a search drops one that has left it; the archive drops what it deletes.
 */
class SearchIndexTest {
  private final TestSteps steps = new TestSteps();
  private TestNode node;

  private TestNode node(String archiveDelay) {
    node = new TestNode().set("ARCHIVE_URL", TestDatabase.url()).set("ARCHIVE_TABLE", TestDatabase.newTable())
        .set("ARCHIVE_DELAY", archiveDelay).set("ARCHIVE_INTERVAL", "50ms").set("NODE_IDLE_WAIT", "200ms")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,"
            + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .pipeline("refund", "{'name':'refund','nodeGroup':'master','transactionType':true,"
            + "'steps':[{'type':'util/fail','params':{'note':'no'}}]}")
        .pipeline("gate", "{'name':'gate','nodeGroup':'master','transactionType':true,"
            + "'steps':[{'type':'util/wait','params':{'switch':'go'}}]}")
        .pipeline("nest", "{'name':'nest','nodeGroup':'master','transactionType':true,"
            + "'steps':[{'type':'util/child-pipeline','params':{'field':'kind','map':{'x':'gate'},'default':'gate'}}]}")
        .pipeline("flaky", "{'name':'flaky','nodeGroup':'master','transactionType':true,"
            + "'steps':[{'type':'test/flaky','params':{'failures':9}}],"
            + "'retry':{'maxAttempts':3,'initialInterval':'1h','jitter':false}}")
        .start(steps.registry());
    return node;
  }

  @AfterEach
  void stop() {
    node.close();
  }

  private TxSummary start(String type, JsonObject extra) {
    JsonObject body = new JsonObject().put("type", type).put("owner", "acme").put("input", new JsonObject());
    return node.transactions.start(extra == null ? body : body.mergeIn(extra)).await();
  }

  private Response score(String phase, String txId) {
    return TestRedis.cmd("ZSCORE", node.keys.phaseZ(node.keys.partitionOf(txId), phase), txId);
  }

  private void until(String txId, String processingState, String what) {
    Eventually.until(Duration.ofSeconds(10), what, () -> node.store.reads.getState(txId).await().processingState(),
        processingState::equals);
  }

  private Set<String> found(String status) {
    Search s = new Search(node.store.reads, node.keys, node.node().archive());
    Set<String> ids = new TreeSet<>();
    s.run(Search.parse(Map.of("status", status, "limit", "100"), null)).await().getJsonArray("transactions")
        .forEach(o -> ids.add(((JsonObject) o).getString("txId") + " " + ((JsonObject) o).getString("phase")));
    return ids;
  }

  @Test
  void each_index_holds_what_entered_its_phase_and_a_search_drops_what_left_it() {
    node("1h");
    TxSummary failed = start("refund", null);
    assertEquals(TxStatus.FAILED, node.awaitFinal(failed.txId()).status());
    TxSummary retrying = start("flaky", null);
    Eventually.until(Duration.ofSeconds(10), "its first retry", () -> node.store.reads.getState(retrying.txId())
        .await().retry(), r -> r != null);
    TxSummary gate = start("gate", null);
    until(gate.txId(), "sleeping", "the gate to wait");
    TxSummary nest = start("nest", null);
    until(nest.txId(), "sleeping", "the parent to wait for its child");
    TxSummary cancelled = start("order", new JsonObject().put("delay", "1h"));
    node.transactions.cancel(cancelled.txId(), "acme").await();

    assertEquals(failed.created().toEpochMilli(), score("ended", failed.txId()).toLong());
    assertEquals(cancelled.created().toEpochMilli(), score("ended", cancelled.txId()).toLong());
    assertEquals(retrying.created().toEpochMilli(), score("retrying", retrying.txId()).toLong());
    assertEquals(gate.created().toEpochMilli(), score("waiting", gate.txId()).toLong());
    assertEquals(nest.created().toEpochMilli(), score("waiting", nest.txId()).toLong());
    assertEquals(Set.of(failed.txId() + " failed"), found("failed"));
    assertEquals(Set.of(failed.txId() + " failed", cancelled.txId() + " cancelled"), found("failed,cancelled"));
    assertEquals(Set.of(retrying.txId() + " retrying"), found("retrying"));
    Set<String> waiting = found("waiting");
    assertEquals(3, waiting.size(), "the gate, the parent and its child (a gate too): " + waiting);
    assertEquals(true, waiting.contains(gate.txId() + " waiting") && waiting.contains(nest.txId() + " waiting"));

    // the gate goes on and succeeds: it has left waiting, and the next search of it drops its entry
    node.transactions.setSwitch(gate.txId(), "acme", "go", true).await();
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(gate.txId()).status());
    assertEquals(2, found("waiting").size());
    assertNull(score("waiting", gate.txId()));
    assertNull(score("ended", gate.txId()), "a success is in no index");
  }

  @Test
  void what_the_archive_deletes_leaves_the_indexes() {
    node("0s");
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      ids.add(start("refund", null).txId());
    }
    for (String id : ids) {
      node.awaitFinal(id);
    }
    Eventually.until(Duration.ofSeconds(10), "all three archived and out of phaseZ:ended", () -> ids.stream()
        .filter(id -> score("ended", id) != null || node.store.reads.getState(id).await() != null).count(),
        n -> n == 0);
    // and the search still finds them, in the archive
    assertEquals(3, found("failed").size());
  }
}
