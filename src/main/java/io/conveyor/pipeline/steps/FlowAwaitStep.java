package io.conveyor.pipeline.steps;

import io.conveyor.model.Durations;
import io.conveyor.model.Identifiers;
import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepContext;
import io.conveyor.pipeline.StepResult;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Set;

/**
 * flow/await: waits, off any worker, for a business event of the transaction's owner with the name params.event
 * and the key params.key (a template over the input, e.g. ${input.orderId}). The first event kept for that key
 * (sent before the wait began, within events.retention) is taken at once; else the transaction sleeps until
 * one is sent (see domain/Events) or params.timeout (default 1d) passes. Its output is the input with
 * {"event": {id, name, key, payload}}. On timeout, params.onTimeout: fail (the default: the transaction fails,
 * code timeout, not retried) or continue, with params.default as the output (the input when none).
 */
public final class FlowAwaitStep extends BuiltInStep {
  /**
   * The node's local address that begins and ends waits (bus/Addresses.EVENT_AWAIT; the pipeline package
   * imports nothing of the bus, so the name is repeated here and a test holds the two equal).
   */
  public static final String ADDRESS = "conveyor.event.await";
  /** The longest business key, in characters. */
  public static final int MAX_KEY = 256;

  public FlowAwaitStep() {
    super("flow/await", Set.of("event", "key", "timeout", "onTimeout", "default"));
  }

  @Override
  Step step(JsonObject params) {
    String event = Params.text(params, "event", null);
    if (!event.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) {
      throw new IllegalArgumentException("params.event: expected an event name of letters, digits, _ . - (at most "
          + "64), got '" + event + "'");
    }
    Template key = Template.of(Params.text(params, "key", null), "params.key");
    Duration timeout = params.containsKey("timeout") ? Params.duration(params, "timeout", Duration.ofDays(365))
        : Duration.ofDays(1);
    String onTimeout = Params.text(params, "onTimeout", "fail");
    if (!onTimeout.equals("fail") && !onTimeout.equals("continue")) {
      throw new IllegalArgumentException("params.onTimeout: expected fail or continue, got '" + onTimeout + "'");
    }
    if (params.containsKey("default") && !onTimeout.equals("continue")) {
      throw new IllegalArgumentException("params.default: only with onTimeout continue");
    }
    JsonObject fallback = params.containsKey("default") ? Params.object(params, "default") : null;
    return ctx -> {
      String k;
      try {
        k = key.render(ctx, false);
      } catch (Template.Missing e) {
        return Future.succeededFuture(StepResult.failed("params.key: " + e.getMessage()));
      }
      String bad = k.isEmpty() ? "is empty" : k.length() > MAX_KEY ? "is longer than " + MAX_KEY + " characters"
          : Identifiers.problem(k);
      if (bad != null) {
        return Future.succeededFuture(new StepResult.Failed("params.key: the key " + bad, null, "bad-key", false,
            null));
      }
      return ask(ctx, event, k, timeout).map(reply -> switch (reply.getString("code")) {
        case "DELIVERED" -> StepResult.success(ctx.input().copy().put("event", new JsonObject()
            .put("id", reply.getString("id")).put("name", event).put("key", k)
            .put("payload", reply.getValue("payload"))));
        case "WAITING" -> new StepResult.Sleep(timeout, switchName(ctx.step()));
        default -> onTimeout.equals("continue") ? StepResult.success(fallback != null ? fallback.copy() : ctx.input())
            : new StepResult.Failed("no event " + event + " with key " + k + " came within "
                + Durations.format(timeout), null, "timeout", false, null);
      });
    };
  }

  /**
   * The business key a flow/await step with params waits on, rendered for ctx as the step renders it (the console
   * shows it and prefills the event to send); an IllegalArgumentException says why there is none.
   */
  public static String keyOf(JsonObject params, StepContext ctx) {
    try {
      return Template.of(Params.text(params, "key", null), "params.key").render(ctx, false);
    } catch (Template.Missing e) {
      throw new IllegalArgumentException("params.key: " + e.getMessage());
    }
  }

  /** The switch a send sets on a waiting transaction to wake it (not a name a client's switch can take). */
  public static String switchName(int step) {
    return "await:" + step;
  }

  /**
   * The first run begins the wait; a later one (woken by the event's switch or by the time) ends it. The waiter is
   * the waiting step (txId and step index from 0, every run alike: a rerun takes the event the step was given), not
   * an idempotency key, which StepContext alone builds.
   */
  private static Future<JsonObject> ask(StepContext ctx, String event, String key, Duration timeout) {
    JsonObject q = new JsonObject().put("owner", ctx.owner()).put("name", event).put("key", key)
        .put("waiter", String.join(":", ctx.txId(), Integer.toString(ctx.step()))).put("timeoutMs", timeout.toMillis())
        .put("ending", ctx.retry() > 0);
    return ctx.vertx().eventBus().<JsonObject>request(ADDRESS, q).map(m -> m.body());
  }
}
