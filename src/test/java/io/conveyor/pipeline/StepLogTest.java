package io.conveyor.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A step's log lines carry txId, step and nodeId, also when written from a callback. */
class StepLogTest {
  @Test
  void a_line_a_step_logs_later_names_its_transaction_step_and_node() {
    Logger steps = (Logger) LoggerFactory.getLogger("io.conveyor.step");
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    steps.addAppender(seen);
    try (TestNode node = new TestNode().pipeline("talk", "{'name':'talk','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'util/fixed-reply','params':{'reply':{}}},{'type':'test/log'}]}")
        .start(new TestSteps().registry())) {
      String txId = node.start("talk", new JsonObject());
      node.awaitFinal(txId);
      ILoggingEvent line = Eventually.until(Duration.ofSeconds(5), "the step's line", () -> seen.list.stream()
          .filter(e -> e.getFormattedMessage().equals("step says hello")).findFirst().orElse(null), e -> e != null);
      Map<String, String> mdc = line.getMDCPropertyMap();
      assertEquals(txId, mdc.get("txId"));
      assertEquals("1", mdc.get("step"));
      assertEquals(node.node().nodeId(), mdc.get("nodeId"));
    } finally {
      steps.detachAppender(seen);
    }
  }
}
