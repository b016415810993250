package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepContext;
import io.conveyor.pipeline.StepResult;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * eventbus: sends the step's input to params.address (request/reply, anywhere in the cluster or through a
 * bridge) and takes the reply {status, output, note} as its result; status is success (the default),
 * failed or aborted; a failed reply may add code (what a retry policy's nonRetryable names) and retryable:
 * false. The headers carry txId, step (from 0), attempt, stepAttempt, owner and node, so the consumer can
 * recognise a re-run, idempotencyKey (StepContext.idempotencyKey: one per step and run, the same across retries
 * and takeovers), and traceparent when the transaction is traced. A consumer that fails the message fails the step (code eventbus-<failure code>); a reply of another
 * shape is an internal error; silence runs into the step's timeout. No consumer at the address is often
 * passing (its node is restarting, or the cluster view is changing after a pause): the step sleeps off the
 * worker and tries again, up to params.noConsumerTries times in all (default 9, about 25 s: 250 ms doubling
 * to 5 s between tries), before it is an internal error; 1 makes it an error at once. Silence while the
 * node's cluster view changed (a member left, joined or merged back, a node went silent; ClusterChanges) is
 * taken the same way: the request or its reply likely went to a member that could not answer or be answered.
 * So the request gives up a little before the step's timeout (a fifth of it, at most 250 ms), and only
 * silence in a steady view runs into the timeout, as before. A step declared "idempotent": false is not sent again
 * after such silence (the request may have been handled): it fails with code maybe-ran, never retried.
 */
public final class EventBusStep extends BuiltInStep {
  /** How often a step with no consumer at its address is tried in all, unless params say otherwise. */
  static final int NO_CONSUMER_TRIES = 9;
  private static final long FIRST_WAIT_MS = 250;
  private static final long LONGEST_WAIT_MS = 5_000;
  /** How long before the step's timeout its request gives up, at most, to ask whether the view changed. */
  private static final long MARGIN_MS = 250;
  private final ClusterChanges changes;

  public EventBusStep(ClusterChanges changes) {
    super("eventbus", Set.of("address", "noConsumerTries"));
    this.changes = changes;
  }

  @Override
  Step step(JsonObject params) {
    String address = Params.text(params, "address", null);
    if (address.isBlank()) {
      throw new IllegalArgumentException("params.address: expected an event-bus address");
    }
    int tries = Params.integer(params, "noConsumerTries", NO_CONSUMER_TRIES, 1, 100);
    return ctx -> {
      long sent = changes.now();
      return ctx.vertx().eventBus().<Object>request(address, ctx.input(), options(ctx))
          .map(reply -> result(address, reply.body()))
          .recover(e -> failed(address, ctx, tries, sent, e));
    };
  }

  private Future<StepResult> failed(String address, StepContext ctx, int tries, long sent, Throwable e) {
    if (!(e instanceof ReplyException r)) {
      return Future.failedFuture(e);
    }
    if (r.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
      return Future.succeededFuture(new StepResult.Failed(address + " failed: " + r.getMessage(), null,
          "eventbus-" + r.failureCode(), true, null));
    }
    boolean moved = r.failureType() == ReplyFailure.TIMEOUT && changes.changedSince(sent);
    if (moved && !ctx.idempotent()) {
      // the request may have been handled and its answer lost: a step declared not idempotent is not sent again
      return Future.succeededFuture(new StepResult.Failed("no answer from " + address + " while the cluster view "
          + "changed: the request may have been handled, and the step is declared not idempotent", null,
          "maybe-ran", false, null));
    }
    if ((r.failureType() == ReplyFailure.NO_HANDLERS || moved) && ctx.retry() + 1 < tries) {
      ctx.log().warn("{} at {} (try {} of {}); trying again off the worker", moved ? "no answer while the cluster "
          + "view changed" : "no consumer", address, ctx.retry() + 1, tries);
      return Future.succeededFuture(new StepResult.Sleep(Duration.ofMillis(
          Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS << Math.min(ctx.retry(), 5))), null));
    }
    if (r.failureType() == ReplyFailure.TIMEOUT) {
      // silence in a steady view: the runner's timer, due a margin later, ends the step timeout, as it always did
      return ctx.vertx().timer(margin(ctx) + 1000, TimeUnit.MILLISECONDS).compose(t -> Future.failedFuture(e));
    }
    return Future.failedFuture(e);
  }

  /** How long before the step's timeout its request gives up: a fifth of the timeout, at most MARGIN_MS. */
  private static long margin(StepContext ctx) {
    return Math.min(MARGIN_MS, ctx.timeout().toMillis() / 5);
  }

  /** The request gives up a margin before the step's timeout, so the step can tell a view change from silence. */
  private static DeliveryOptions options(StepContext ctx) {
    DeliveryOptions o = new DeliveryOptions().setSendTimeout(Math.max(1, ctx.timeout().toMillis() - margin(ctx)))
        .addHeader("txId", ctx.txId()).addHeader("step", Integer.toString(ctx.step()))
        .addHeader("attempt", Long.toString(ctx.attempt())).addHeader("stepAttempt", Integer.toString(ctx.stepAttempt()))
        .addHeader("owner", ctx.owner()).addHeader("idempotencyKey", ctx.idempotencyKey())
        .addHeader("node", ctx.nodeId());
    if (ctx.traceparent() != null) {
      o.addHeader("traceparent", ctx.traceparent()); // the step's span: the consumer's work hangs under it
    }
    return o;
  }

  /** A failed reply's code: its own (a retry policy's nonRetryable names it), else "failed". */
  private static String code(String address, JsonObject reply) {
    Object code = reply.getValue("code", "failed");
    if (!(code instanceof String c) || !c.matches("[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")) {
      throw new IllegalStateException(address + " replied code " + code + "; expected letters, digits, _ . : -");
    }
    return c;
  }

  private static StepResult result(String address, Object body) {
    if (!(body instanceof JsonObject reply)) {
      throw new IllegalStateException(address + " replied " + body + ", not {status, output, note}");
    }
    Object output = reply.getValue("output", new JsonObject());
    if (!(output instanceof JsonObject out)) {
      throw new IllegalStateException(address + " replied an output that is not a JSON object");
    }
    String note = reply.getValue("note") instanceof String n ? n : null;
    return switch (String.valueOf(reply.getValue("status", "success"))) {
      case "success" -> StepResult.success(out);
      case "failed" -> new StepResult.Failed(note, out, code(address, reply), !Boolean.FALSE.equals(
          reply.getValue("retryable")), null);
      case "aborted" -> new StepResult.Aborted(note, out);
      default -> throw new IllegalStateException(address + " replied status " + reply.getValue("status")
          + "; expected success, failed or aborted");
    };
  }
}
