package io.conveyor.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import io.conveyor.model.Dequeued;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A start call reaches the workers' slots by request: each question runs on their context, each answer on its own. */
class WorkerHandoffTest {
  private final Vertx vertx = Vertx.vertx();
  private final Context workers = newContext();
  private final Context caller = newContext();
  /** Where each call of the workers' side ran. */
  private final List<String> ranOn = new CopyOnWriteArrayList<>();
  private final WorkerHandoff handoff = new WorkerHandoff(workers, "node-a", "master",
      n -> {
        ranOn.add("reserve " + n + " on " + where());
        return Math.min(n, 2);
      },
      (reserved, txs) -> ranOn.add("handed " + reserved + "/" + txs.size() + " on " + where()),
      reserved -> ranOn.add("lost " + reserved + " on " + where()));

  @AfterEach
  void close() {
    vertx.close().await();
  }

  /** A context of its own, as a verticle gets (getOrCreateContext sticks to the test's thread). */
  private Context newContext() {
    Context[] got = new Context[1];
    vertx.deployVerticle(new io.vertx.core.VerticleBase() {
      @Override
      public io.vertx.core.Future<?> start() {
        got[0] = context;
        return io.vertx.core.Future.succeededFuture();
      }
    }).await();
    return got[0];
  }

  private String where() {
    Context c = Vertx.currentContext();
    return c == workers ? "workers" : c == caller ? "caller" : "elsewhere";
  }

  @Test
  void a_reserve_asked_from_another_context_is_decided_on_the_workers_context_and_answered_on_the_callers()
      throws Exception {
    assertNotSame(workers, caller);
    CompletableFuture<String> answer = new CompletableFuture<>();
    caller.runOnContext(v -> handoff.reserve(5).onComplete(ar -> answer.complete(ar.result() + " on " + where())));

    assertEquals("2 on caller", answer.get(5, TimeUnit.SECONDS));
    assertEquals(List.of("reserve 5 on workers"), ranOn);
  }

  @Test
  void a_reserve_asked_on_the_workers_own_context_is_answered_at_once() throws Exception {
    CompletableFuture<String> answer = new CompletableFuture<>();
    workers.runOnContext(v -> {
      io.vertx.core.Future<Integer> reply = handoff.reserve(1);
      answer.complete(reply.isComplete() + " " + reply.result());
    });

    assertEquals("true 1", answer.get(5, TimeUnit.SECONDS));
  }

  @Test
  void handed_and_lost_run_on_the_workers_context_in_the_order_they_were_told() throws Exception {
    CompletableFuture<Void> told = new CompletableFuture<>();
    caller.runOnContext(v -> {
      handoff.handed(2, List.of(Dequeued.unreadable("tx-1", 1, "test")));
      handoff.lost(1);
      workers.runOnContext(w -> told.complete(null)); // after both: a context runs its tasks in order
    });
    told.get(5, TimeUnit.SECONDS);

    assertEquals(List.of("handed 2/1 on workers", "lost 1 on workers"), ranOn);
  }
}
