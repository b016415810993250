package io.conveyor.bus;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.redis.LeaderRole;
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
    Leadership l = new Leadership(vertx, LeaderRole.ARCHIVE, "archiving", "node-a", null, Clock.systemUTC(),
        Duration.ofSeconds(2));
    assertFalse(l.leads());
    l.update(true, Leadership.asking());
    assertTrue(l.leads());
    // an answer to a call sent 3 s ago (the node was paused meanwhile) renews a lease that has run out here
    l.update(true, Leadership.asking() - Duration.ofSeconds(3).toNanos());
    assertFalse(l.leads(), "a lease older than its length is not acted on");
    l.update(true, Leadership.asking());
    l.update(false, Leadership.asking());
    assertFalse(l.leads());
  }
}
