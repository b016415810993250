package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * 1,000 parents of a flow/parallel step with five branches each, on three nodes (one serves the parents' group,
 * two the branches' group b): every parent ends success with its five outputs in order, and each resumes exactly
 * once, though branches of one parent end at the same moment on different nodes.
 */
class ParallelLoadIT {
  private static final Logger log = LoggerFactory.getLogger(ParallelLoadIT.class);
  private static final int PARENTS = 1000;

  @Test
  @Timeout(300)
  void a_thousand_parents_of_five_branches_over_three_nodes_each_resume_exactly_once() {
    TestSteps steps = new TestSteps();
    TestNode a = new TestNode().set("NODE_WORKERS", "100")
        .pipeline("fan", "{'name':'fan','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/parallel','params':{'forEach':'items','pipeline':'leaf'}},{'type':'test/record'}]}")
        .pipeline("leaf", "{'name':'leaf','nodeGroup':'b','steps':[{'type':'test/record'}]}");
    TestNode b1 = a.sibling().set("NODE_GROUP", "b").set("NODE_WORKERS", "100");
    TestNode b2 = a.sibling().set("NODE_GROUP", "b").set("NODE_WORKERS", "100");
    List<TestNode> nodes = List.of(a, b1, b2);
    try {
      nodes.forEach(n -> n.start(steps.registry()));
      long began = System.nanoTime();
      List<Future<String>> starts = new ArrayList<>();
      for (int i = 0; i < PARENTS; i++) {
        JsonArray items = new JsonArray();
        for (int j = 0; j < 5; j++) {
          items.add(new JsonObject().put("parent", i).put("branch", j));
        }
        starts.add(a.transactions.start(new JsonObject().put("type", "fan").put("owner", "acme")
            .put("input", new JsonObject().put("items", items))).map(TxSummary::txId));
      }
      List<String> parents = Future.all(starts).await().list();
      for (String id : parents) {
        TxSummary s = Eventually.until(Duration.ofSeconds(120), id + " to finish",
            () -> a.store.reads.getState(id).await(), st -> st != null && st.status().isFinal());
        assertEquals(TxStatus.SUCCESS, s.status(), id + ": " + s.note());
      }
      long ms = (System.nanoTime() - began) / 1_000_000;
      java.util.Set<String> parentIds = java.util.Set.copyOf(parents);
      Map<String, List<JsonObject>> resumed = steps.recorded.stream()
          .filter(r -> parentIds.contains(r.getString("txId")))
          .collect(Collectors.groupingBy(r -> r.getString("txId")));
      assertEquals(PARENTS, resumed.size());
      for (Map.Entry<String, List<JsonObject>> e : resumed.entrySet()) {
        assertEquals(1, e.getValue().size(), e.getKey() + " resumed more than once");
        JsonArray outputs = e.getValue().get(0).getJsonObject("input").getJsonArray("outputs");
        assertEquals(5, outputs.size());
        for (int j = 0; j < 5; j++) {
          assertEquals(j, outputs.getJsonObject(j).getInteger("branch"), "outputs in branch order");
        }
      }
      Map<String, Long> byNode = steps.recorded.stream().filter(r -> !parentIds.contains(r.getString("txId")))
          .collect(Collectors.groupingBy(r -> r.getString("nodeId"), Collectors.counting()));
      log.info("{} parents x 5 branches in {} ms; branches ran per node: {}", PARENTS, ms, byNode.values());
      assertEquals(5L * PARENTS, byNode.values().stream().mapToLong(Long::longValue).sum(), "each branch ran once");
      assertTrue(byNode.size() == 2, "both nodes of group b ran branches: " + byNode);
    } finally {
      for (TestNode n : List.of(b2, b1, a)) {
        n.close();
      }
    }
  }
}
