package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.TestCluster;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Three clustered nodes in two groups: a parent in group a calls a child pipeline in group b. */
class ChildPipelineTest {

  @Test
  void parent_steps_run_only_in_the_parents_group_and_child_steps_only_in_the_childs() {
    TestSteps steps = new TestSteps();
    String cluster = TestCluster.newName();
    TestNode a1 = new TestNode().set("CLUSTER_ENABLED", "true").set("CLUSTER_NAME", cluster).set("NODE_GROUP", "a")
        .pipeline("parent", "{'name':'parent','nodeGroup':'a','transactionType':true,'steps':["
            + "{'type':'test/record'},"
            + "{'type':'util/child-pipeline','params':{'field':'kind','map':{'parcel':'child'},'default':'child'}},"
            + "{'type':'test/record'}]}")
        .pipeline("child", "{'name':'child','nodeGroup':'b','steps':["
            + "{'type':'test/record'},{'type':'util/fixed-reply','params':{'reply':{'shipped':true}}}]}");
    TestNode a2 = a1.sibling();
    TestNode b1 = a1.sibling().set("NODE_GROUP", "b");
    List<TestNode> nodes = List.of(a1, a2, b1);
    try {
      nodes.forEach(n -> n.start(steps.registry()));
      Map<String, String> groupOf = Map.of(a1.node().nodeId(), "a", a2.node().nodeId(), "a",
          b1.node().nodeId(), "b");

      List<String> parents = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        parents.add(a1.start("parent", new JsonObject().put("kind", "parcel").put("i", i)));
      }
      for (String txId : parents) {
        TxSummary s = a1.awaitFinal(txId);
        assertEquals(TxStatus.SUCCESS, s.status(), s.note());
        assertEquals(new JsonObject().put("shipped", true).put("recorded", true), s.output());
      }

      Set<String> parentIds = Set.copyOf(parents);
      Map<Boolean, List<JsonObject>> split = steps.recorded.stream()
          .collect(Collectors.partitioningBy(r -> parentIds.contains(r.getString("txId"))));
      assertEquals(12, split.get(true).size(), "two recorded steps per parent");
      assertEquals(6, split.get(false).size(), "one recorded step per child");
      assertTrue(split.get(true).stream().allMatch(r -> groupOf.get(r.getString("nodeId")).equals("a")),
          "a parent step ran outside group a: " + split.get(true));
      assertTrue(split.get(false).stream().allMatch(r -> groupOf.get(r.getString("nodeId")).equals("b")),
          "a child step ran outside group b: " + split.get(false));
      // the child got the parent's step output as its input
      assertFalse(split.get(false).isEmpty());
      assertEquals("parcel", split.get(false).get(0).getJsonObject("input").getString("kind"));
    } finally {
      nodes.forEach(TestNode::close);
    }
  }
}
