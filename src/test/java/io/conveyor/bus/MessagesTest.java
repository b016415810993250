package io.conveyor.bus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.Checkpoint;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Facts go on the bus as plain JSON and come off as the same records; a leadership change is told once. */
@ExtendWith(VertxExtension.class)
class MessagesTest {

  @Test
  @Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
  void a_fact_published_as_json_is_read_back_as_the_same_record(Vertx vertx, VertxTestContext test) {
    NodeDied died = new NodeDied("node-1", "heartbeat expired", 7, "node-2", 1_800_000_000_000L);
    vertx.eventBus().consumer(Addresses.NODE_DIED, m -> test.verify(() -> {
      // a bridge client in any language sees these very fields
      assertEquals(new JsonObject().put("nodeId", "node-1").put("reason", "heartbeat expired").put("requeued", 7)
          .put("reapedBy", "node-2").put("at", 1_800_000_000_000L), m.body());
      assertEquals(died, Messages.decode(m.body(), NodeDied.class));
      test.completeNow();
    })).completion().onComplete(test.succeeding(v -> vertx.eventBus().publish(Addresses.NODE_DIED,
        Messages.encode(died))));
  }

  @Test
  void a_completion_built_directly_is_what_the_generic_encoding_gives() {
    TxCompleted done = new TxCompleted("tx-1", "success");
    assertEquals(Messages.encode(done), done.toJson());
    assertEquals(done, Messages.decode(done.toJson(), TxCompleted.class));
  }

  @Test
  void a_body_that_is_not_a_json_object_is_refused_with_what_was_expected() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Messages.decode("node-1 died", NodeDied.class));
    assertEquals("expected a JSON object for NodeDied, got node-1 died", e.getMessage());
  }

  @Test
  @Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
  void leadership_publishes_each_change_once_and_nothing_while_it_stays(Vertx vertx, VertxTestContext test)
      throws InterruptedException {
    List<LeaseChanged> heard = new ArrayList<>();
    Checkpoint two = test.checkpoint(2);
    Clock clock = Clock.fixed(Instant.ofEpochMilli(42), ZoneOffset.UTC);
    vertx.eventBus().consumer(Addresses.LEASE_CHANGED, m -> {
      heard.add(Messages.decode(m.body(), LeaseChanged.class));
      two.flag();
    }).completion().onComplete(test.succeeding(v -> {
      io.conveyor.lease.Leadership archive = new io.conveyor.lease.Leadership(vertx,
          io.conveyor.redis.LeaderRole.ARCHIVE, 3, "archiving", "node-a", null, clock, io.conveyor.time.Ticker.SYSTEM,
          java.time.Duration.ofSeconds(10));
      archive.update(true, archive.asking());
      archive.update(true, archive.asking());
      archive.update(false, archive.asking());
      archive.update(false, archive.asking());
    }));
    test.awaitCompletion(5, TimeUnit.SECONDS);
    assertEquals(List.of(new LeaseChanged("archive", 3, "node-a", true, 42), new LeaseChanged("archive", 3,
        "node-a", false, 42)), heard);
  }
}
