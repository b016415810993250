package io.conveyor.lease;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.redis.LeaderRole;
import io.conveyor.testing.MutableTicker;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A leader counts its lease from when it asked, and stops believing it leads once that much has passed. */
class LeadershipTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() {
    vertx.close().await();
  }

  @Test
  void a_lease_is_counted_from_the_call_that_renewed_it_not_from_its_answer() {
    MutableTicker ticker = new MutableTicker(1_000_000_000L);
    Leadership l = new Leadership(vertx, LeaderRole.ARCHIVE, -1, "archiving", "node-a", null, Clock.systemUTC(),
        ticker, Duration.ofSeconds(2));
    assertFalse(l.leads());
    l.update(true, l.asking());
    assertTrue(l.leads());
    // an answer to a call sent 3 s ago (the node was paused meanwhile) renews a lease that has run out here
    l.update(true, l.asking() - Duration.ofSeconds(3).toNanos());
    assertFalse(l.leads(), "a lease older than its length is not acted on");
    l.update(true, l.asking());
    l.update(false, l.asking());
    assertFalse(l.leads());
  }

  @Test
  void a_lease_runs_out_on_the_ticker_without_a_renewal() {
    MutableTicker ticker = new MutableTicker(0);
    Leadership l = new Leadership(vertx, LeaderRole.ARCHIVE, 0, "archiving", "node-a", null, Clock.systemUTC(),
        ticker, Duration.ofSeconds(2));
    l.update(true, l.asking());
    ticker.advance(Duration.ofMillis(1999));
    assertTrue(l.leads(), "within its length the lease still runs");
    ticker.advance(Duration.ofMillis(1));
    assertFalse(l.leads(), "at its length the leader stops acting, before any other node can lead");
  }
}
