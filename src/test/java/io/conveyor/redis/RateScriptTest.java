package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.ScriptTest;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RateScriptTest extends ScriptTest {

  @Test
  void a_burst_passes_then_starts_wait_for_the_refill_and_owners_have_buckets_of_their_own() {
    for (int i = 0; i < 3; i++) {
      assertEquals(0L, h.store.queue.takeStartToken("acme", 2, 3).await());
    }
    assertEquals(500L, h.store.queue.takeStartToken("acme", 2, 3).await());
    assertEquals(0L, h.store.queue.takeStartToken("globex", 2, 3).await());
    h.clock.advance(Duration.ofMillis(499));
    assertTrue(h.store.queue.takeStartToken("acme", 2, 3).await() > 0);
    h.clock.advance(Duration.ofMillis(1));
    assertEquals(0L, h.store.queue.takeStartToken("acme", 2, 3).await());
    assertTrue(cmd("PTTL", h.keys.rateH("acme")).toLong() > 0, "an idle bucket expires");
  }
}
