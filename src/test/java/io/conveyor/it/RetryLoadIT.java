package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * 10,000 transactions, a fifth of them failing one to three times before they succeed (chosen by txId):
 * every one ends success, none is lost, and the attempts made are the transactions plus the failures
 * injected, no more (no attempt is run twice) and no fewer.
 */
class RetryLoadIT {
  private static final Logger log = LoggerFactory.getLogger(RetryLoadIT.class);
  private static final int COUNT = 10_000;

  @Test
  @Timeout(300)
  void ten_thousand_transactions_with_transient_failures_all_succeed_with_one_attempt_per_failure() {
    TestSteps steps = new TestSteps();
    try (TestNode node = new TestNode().set("REAPER_INTERVAL", "20ms").set("NODE_WORKERS", "200")
        .pipeline("flaky", "{'name':'flaky','nodeGroup':'master','transactionType':true,"
            + "'retry':{'maxAttempts':4,'initialInterval':'10ms','backoffCoefficient':2},'steps':["
            + "{'type':'test/record'},{'type':'test/transient'}]}")
        .start(steps.registry())) {
      long began = System.nanoTime();
      List<String> ids = new ArrayList<>(COUNT);
      for (int from = 0; from < COUNT; from += 500) {
        List<Future<String>> chunk = new ArrayList<>();
        for (int i = from; i < from + 500; i++) {
          chunk.add(node.transactions.start(new JsonObject().put("type", "flaky").put("owner", "acme")
              .put("input", new JsonObject().put("i", i))).map(TxSummary::txId));
        }
        Future.all(chunk).await().<String>list().forEach(ids::add);
      }
      int expected = 0;
      for (String id : ids) {
        expected += TestSteps.transientFailures(id);
      }
      int failing = (int) ids.stream().filter(id -> TestSteps.transientFailures(id) > 0).count();
      for (String id : ids) {
        TxSummary s = Eventually.until(Duration.ofSeconds(120), id + " to finish",
            () -> node.store.reads.getState(id).await(), st -> st != null && st.status().isFinal());
        assertEquals(TxStatus.SUCCESS, s.status(), id + ": " + s.note());
      }
      log.info("{} transactions, {} with injected failures ({} failures), {} attempts, in {} ms", COUNT, failing,
          expected, steps.transientAttempts.get(), (System.nanoTime() - began) / 1_000_000);
      assertEquals(expected, steps.injected.get(), "failures injected");
      assertEquals(COUNT + expected, steps.transientAttempts.get(), "attempts: one per transaction plus one per failure");
      assertEquals(COUNT, steps.recorded.size(), "the step before the flaky one ran once per transaction");
    }
  }
}
