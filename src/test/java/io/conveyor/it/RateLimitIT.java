package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * rateLimit 100/s on a pipeline with a deep queue, on a node with 200 workers: what runs never outpaces the
 * bucket (a tenth of a second's worth at once, then 100 a second). Prints the completions of each second;
 * -Drate.seconds=30 for the figure.
 */
class RateLimitIT {
  private static final Logger log = LoggerFactory.getLogger(RateLimitIT.class);
  private static final int SECONDS = Integer.getInteger("rate.seconds", 6);
  private static final int RATE = 100;

  @Test
  @Timeout(300)
  void a_deep_queue_runs_at_its_pipelines_rate() {
    TestSteps steps = new TestSteps();
    try (TestNode node = new TestNode().set("REDIS_PARTITIONS", "1").set("NODE_WORKERS", "200")
        .pipeline("paced", "{'name':'paced','nodeGroup':'master','transactionType':true,'rateLimit':'" + RATE
            + "/s','steps':[{'type':'test/record'}]}").start(steps.registry())) {
      int n = RATE * (SECONDS + 2);
      List<Future<TxSummary>> started = new ArrayList<>(n);
      long began = System.currentTimeMillis();
      for (int i = 0; i < n; i++) {
        started.add(node.transactions.start(new JsonObject().put("type", "paced").put("owner", "acme")
            .put("input", new JsonObject().put("i", i))));
      }
      Future.all(started).await();
      long t0 = System.currentTimeMillis();
      List<Integer> perSecond = new ArrayList<>();
      // what ran while the starts went in is counted apart: the seconds below are whole seconds after them
      int before = steps.recorded.size();
      int whileStarting = before;
      for (int s = 1; s <= SECONDS; s++) {
        long until = t0 + s * 1000L;
        Eventually.until(Duration.ofSeconds(2), "second " + s, System::currentTimeMillis, t -> t >= until);
        int now = steps.recorded.size();
        long read = System.currentTimeMillis(); // after the count: a stall between the two only widens the bound
        perSecond.add(now - before);
        before = now;
        // never more than the bucket allows since the first start went in: a tenth of a second's worth at once, then
        // the rate (a bound from the clock, not from s: the starts may take more than a second to go in)
        double allowed = RATE / 10 + RATE * (read - began) / 1000.0;
        assertTrue(now <= allowed + 1, now + " ran in " + (read - began) + " ms at " + RATE + "/s (at most "
            + (long) allowed + ")");
      }
      double steady = perSecond.subList(1, perSecond.size()).stream().mapToInt(Integer::intValue).average()
          .orElse(0);
      log.info("rate limit {}/s: {} ran while {} starts went in ({} ms); then over {} s: per second {}; after the "
          + "first second {} a second on average", RATE, whileStarting, n, t0 - began, SECONDS, perSecond,
          String.format("%.1f", steady));
      assertTrue(steady > 0, "it ran");
    }
  }
}
