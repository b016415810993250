package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.api.ConveyorClient;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Sleeping steps on a real node: a long delay and a wait for a switch, with the node's clock moved by hand. */
class SleepTest {
  private final TestSteps steps = new TestSteps();
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private TestNode node;

  @BeforeEach
  void startNode() {
    node = new TestNode().clock(clock).set("REAPER_INTERVAL", "50ms")
        .pipeline("later", "{'name':'later','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/delay','params':{'duration':'2h'}},{'type':'test/record'}]}")
        .pipeline("approval", "{'name':'approval','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/wait','params':{'switch':'approve','timeout':'1d'}},{'type':'test/record'}]}")
        .start(steps.registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private String processingState(String txId) {
    return cmd("HGET", node.keys.stateH(txId), "processingState").toString();
  }

  @Test
  void a_long_delay_sleeps_off_the_worker_and_the_reaper_wakes_it_once_its_time_has_come() {
    String txId = node.start("later", new JsonObject().put("n", 1));
    Eventually.until(Duration.ofSeconds(10), "the delay to sleep", () -> processingState(txId), "sleeping"::equals);
    assertEquals(0, node.total("ZCARD", node.keys::processingZ));
    clock.advance(Duration.ofHours(2));
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, done.status());
    assertEquals(new JsonObject().put("n", 1).put("recorded", true), done.output());
  }

  @Test
  void a_wait_for_a_switch_ends_as_soon_as_the_switch_is_set_and_passes_its_value_on() {
    String txId = node.start("approval", new JsonObject());
    Eventually.until(Duration.ofSeconds(10), "the wait to sleep", () -> processingState(txId), "sleeping"::equals);
    ConveyorClient client = new ConveyorClient(node.node().vertx(), io.conveyor.testing.KeyedApi.CLIENT);
    client.setSwitch(txId, "acme", "approve", "yes").await();
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.SUCCESS, done.status());
    assertEquals(new JsonObject().put("approve", "yes").put("recorded", true), done.output());
  }

  @Test
  void a_wait_whose_switch_never_comes_fails_after_its_timeout() {
    String txId = node.start("approval", new JsonObject());
    Eventually.until(Duration.ofSeconds(10), "the wait to sleep", () -> processingState(txId), "sleeping"::equals);
    clock.advance(Duration.ofDays(1));
    TxSummary done = node.awaitFinal(txId);
    assertEquals(TxStatus.FAILED, done.status());
    assertEquals("switch approve was not set within 1d", done.note());
  }
}
