package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.bus.Addresses;
import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * ConveyorClient against a real node whose bus loses a message: a request that got no answer is sent again
 * only when sending it twice does no harm, and a start sent twice is still one transaction.
 */
class ConveyorClientTest {
  private static final String KEY = io.conveyor.testing.KeyedApi.CLIENT;
  private final TestSteps steps = new TestSteps();
  private TestNode node;
  private Vertx vertx;
  private final AtomicInteger delivered = new AtomicInteger();

  @BeforeEach
  void startNode() {
    node = new TestNode()
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'paid':true}}}]}")
        .start(steps.registry());
    vertx = node.node().vertx();
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  /** The first request to the address reaches no one (lost on the way); the ones after it get through. */
  private void loseFirstRequestTo(String address) {
    vertx.eventBus().addInboundInterceptor(ctx -> {
      if (ctx.message().address().equals(address) && delivered.incrementAndGet() == 1) {
        return;
      }
      ctx.next();
    });
  }

  /** The node's first answer to a request at the address is lost on its way back (the node did the work). */
  private void loseFirstAnswerTo(String address) {
    AtomicInteger answers = new AtomicInteger();
    vertx.eventBus().addInboundInterceptor(ctx -> {
      if (ctx.message().address().equals(address)) {
        delivered.incrementAndGet();
      }
      ctx.next();
    });
    vertx.eventBus().addOutboundInterceptor(ctx -> {
      if (ctx.message().address().startsWith("__vertx.reply") && ctx.body() instanceof JsonObject j
          && j.containsKey("txId") && answers.incrementAndGet() == 1) {
        return;
      }
      ctx.next();
    });
  }

  @Test
  void a_pause_whose_answer_was_lost_is_sent_again_and_a_resume_once() {
    TxSummary started = new ConveyorClient(vertx, KEY).start(new JsonObject().put("type", "order").put("owner", "acme")
        .put("delay", "1h")).await();
    loseFirstAnswerTo(Addresses.TX_PAUSE);
    ConveyorClient client = new ConveyorClient(vertx, KEY, Duration.ofSeconds(3));
    TxSummary paused = client.pause(started.txId(), "acme", "hold on").await();
    assertEquals("hold on", paused.paused().getString("reason"));
    assertEquals(2, delivered.get(), "the pause was sent again after its lost answer, and answered");
    TxSummary resumed = client.resume(started.txId(), "acme", true).await();
    assertEquals(null, resumed.paused());
    TxException again = assertThrows(TxException.class, () -> client.resume(started.txId(), "acme", false).await());
    assertEquals(TxException.Kind.NOT_PAUSED, again.kind());
  }

  @Test
  void a_status_read_that_got_no_answer_is_sent_again_within_the_timeout() {
    TxSummary started = new ConveyorClient(vertx, KEY).start("order", "acme", new JsonObject()).await();
    loseFirstRequestTo(Addresses.TX_STATUS);
    TxSummary read = new ConveyorClient(vertx, KEY, Duration.ofSeconds(3)).status(started.txId(), "acme").await();
    assertEquals(started.txId(), read.txId());
    assertEquals(2, delivered.get(), "one lost request, one answered");
  }

  @Test
  void a_start_with_an_external_id_whose_answer_was_lost_answers_the_transaction_it_started() {
    loseFirstAnswerTo(Addresses.TX_START);
    TxSummary started = new ConveyorClient(vertx, KEY, Duration.ofSeconds(3)).start(new JsonObject()
        .put("type", "order").put("owner", "acme").put("externalId", "o-17")).await();
    assertEquals(2, delivered.get(), "sent again after the lost answer");
    assertEquals("o-17", started.externalId());
    // one transaction for the externalId: the second send was refused as a duplicate of the first one's
    assertEquals(started.txId(), node.transactions.byExternalId("o-17", "acme").await().txId());
  }

  @Test
  void a_start_without_an_external_id_is_sent_once_as_a_second_would_start_another_transaction() {
    loseFirstAnswerTo(Addresses.TX_START);
    ReplyException silent = assertThrows(ReplyException.class, () -> new ConveyorClient(vertx, KEY,
        Duration.ofSeconds(1)).start("order", "acme", new JsonObject()).await());
    assertEquals(ReplyFailure.TIMEOUT, silent.failureType());
    assertEquals(1, delivered.get());
  }

  @Test
  void a_request_that_finds_no_node_listening_yet_waits_for_one_within_the_timeout() {
    Vertx alone = Vertx.vertx();
    try {
      ConveyorClient client = new ConveyorClient(alone, KEY, Duration.ofSeconds(5));
      var answer = client.status("tx-" + "0".repeat(32), "acme");
      // a node comes up a moment later: its consumer answers the request sent again
      alone.setTimer(600, t -> alone.eventBus().<JsonObject>consumer(Addresses.TX_STATUS, m -> m.fail(404,
          new JsonObject().put("type", "not-found").put("message", "txId: not found").encode())));
      ReplyException notYet = assertThrows(ReplyException.class, () -> new ConveyorClient(alone, KEY,
          Duration.ofMillis(300)).start("order", "acme", new JsonObject()).await());
      assertEquals(ReplyFailure.NO_HANDLERS, notYet.failureType(), "out of time before any node listened");
      assertEquals(io.conveyor.model.TxException.Kind.NOT_FOUND, assertThrows(
          io.conveyor.model.TxException.class, answer::await).kind());
    } finally {
      alone.close().await();
    }
  }

  @Test
  void a_client_acts_for_its_keys_owner_and_an_unknown_key_or_none_is_refused() {
    ConveyorClient client = new ConveyorClient(vertx, KEY);
    TxSummary started = client.start("order", null, new JsonObject()).await();
    assertEquals("acme", started.owner(), "no owner named: the key's");
    assertEquals(started.txId(), client.status(started.txId(), null).await().txId());
    TxException unknown = assertThrows(TxException.class, () -> new ConveyorClient(vertx, "k-nobody")
        .start("order", "acme", new JsonObject()).await());
    assertEquals(TxException.Kind.UNAUTHORIZED, unknown.kind());
    assertEquals("apiKey", unknown.field());
    IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
        () -> new ConveyorClient(vertx, ""));
    assertTrue(none.getMessage().startsWith("apiKey"), none.getMessage());
  }
}
