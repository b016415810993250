package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Priorities on a real node: urgent work started behind a backlog runs before the backlog drains. */
class PriorityTest {

  @Test
  void a_hundred_priority_nine_starts_finish_before_five_thousand_priority_zero_ones_drain() {
    TestSteps steps = new TestSteps();
    try (TestNode node = new TestNode().set("NODE_WORKERS", "20")
        .pipeline("work", "{'name':'work','nodeGroup':'master','transactionType':true,'steps':[{'type':'test/record'}]}")
        .start(steps.registry())) {
      // the backlog is queued while the group is paused, so it is all there when the urgent work comes
      node.transactions.group("master", "pause", "test").await();
      List<Future<?>> starts = new ArrayList<>();
      for (int i = 0; i < 5000; i++) {
        starts.add(node.transactions.start(new JsonObject().put("type", "work").put("owner", "acme")
            .put("input", new JsonObject().put("i", i))));
      }
      Future.all(starts).await();
      Set<String> urgent = new HashSet<>();
      for (int i = 0; i < 100; i++) {
        urgent.add(node.transactions.start(new JsonObject().put("type", "work").put("owner", "acme")
            .put("priority", 9).put("input", new JsonObject().put("urgent", i))).await().txId());
      }
      node.transactions.group("master", "resume", "test").await();
      Eventually.until(Duration.ofSeconds(60), "every transaction to run", steps.recorded::size, n -> n == 5100);
      int lastUrgent = 0;
      for (int i = 0; i < steps.recorded.size(); i++) {
        if (urgent.contains(steps.recorded.get(i).getString("txId"))) {
          lastUrgent = i;
        }
      }
      System.out.printf("the last of 100 priority-9 starts ran %dth of 5100%n", lastUrgent + 1);
      assertTrue(lastUrgent < 200, "the urgent work ran first, not after the backlog: last at " + lastUrgent);
      assertEquals(TxStatus.SUCCESS, node.awaitFinal(urgent.iterator().next()).status());
    }
  }
}
