package io.conveyor.pipeline.steps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.conveyor.pipeline.StepContext;
import io.conveyor.pipeline.StepResult;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Silence while the cluster view changed: an idempotent eventbus step sleeps and sends again; one declared not
 * idempotent does not send again (its request may have been handled) and fails maybe-ran, never retried.
 */
class EventBusStepSilenceTest {
  private final Vertx vertx = Vertx.vertx();
  private final List<String> keys = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() {
    vertx.close().await();
  }

  private StepResult call(boolean idempotent) {
    vertx.eventBus().<Object>consumer("steps.silent", m -> keys.add(m.headers().get("idempotencyKey")))
        .completion().await(); // takes the request and never answers
    EventBusStep type = new EventBusStep(ClusterChanges.of(() -> 0, mark -> true)); // the view always changed
    StepContext ctx = new StepContext("tx-1", "acme", null, 1, 0, "eventbus", new JsonObject(), new JsonObject(),
        "node-a", Duration.ofMillis(500), 0, 1, new JsonObject(), vertx, LoggerFactory.getLogger("test"),
        report -> Future.succeededFuture(), () -> false, null, 2, idempotent);
    return type.create(new JsonObject().put("address", "steps.silent")).run(ctx).await();
  }

  @Test
  void an_idempotent_step_sleeps_to_send_again() {
    assertInstanceOf(StepResult.Sleep.class, call(true));
    assertEquals(List.of("tx-1:1:r2"), keys, "the request carried the step's key for run 2");
  }

  @Test
  void a_step_declared_not_idempotent_fails_maybe_ran_and_is_not_retried() {
    StepResult.Failed f = assertInstanceOf(StepResult.Failed.class, call(false));
    assertEquals("maybe-ran", f.code());
    assertFalse(f.retryable());
    assertEquals(1, keys.size());
  }
}
