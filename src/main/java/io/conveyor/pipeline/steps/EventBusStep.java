package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepContext;
import io.conveyor.pipeline.StepResult;
import io.conveyor.pipeline.StepType;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;

/**
 * eventbus: sends the step's input to params.address (request/reply, anywhere in the cluster or through a
 * bridge) and takes the reply {status, output, note} as its result; status is success (the default),
 * failed or aborted. The headers carry txId, step, attempt, owner and node, so the consumer can recognise a
 * re-run. A consumer that fails the message ends the step failed with its message; no consumer at the
 * address, or a reply of another shape, is an internal error; silence runs into the step's timeout.
 */
public final class EventBusStep implements StepType {
  @Override
  public String name() {
    return "eventbus";
  }

  @Override
  public Step create(JsonObject params) {
    String address = Params.text(params, "address", null);
    if (address.isBlank()) {
      throw new IllegalArgumentException("params.address: expected an event-bus address");
    }
    return ctx -> ctx.vertx().eventBus().<Object>request(address, ctx.input(), options(ctx))
        .map(reply -> result(address, reply.body()))
        .recover(e -> e instanceof ReplyException r && r.failureType() == ReplyFailure.RECIPIENT_FAILURE
            ? Future.succeededFuture(StepResult.failed(address + " failed: " + r.getMessage()))
            : Future.failedFuture(e));
  }

  /** The request outlives the step's timeout, so the runner's timer, not the bus, ends a silent step. */
  private static DeliveryOptions options(StepContext ctx) {
    return new DeliveryOptions().setSendTimeout(ctx.timeout().toMillis() + 1000)
        .addHeader("txId", ctx.txId()).addHeader("step", Integer.toString(ctx.step()))
        .addHeader("attempt", Long.toString(ctx.attempt())).addHeader("owner", ctx.owner())
        .addHeader("node", ctx.nodeId());
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
      case "failed" -> new StepResult.Failed(note, out);
      case "aborted" -> new StepResult.Aborted(note, out);
      default -> throw new IllegalStateException(address + " replied status " + reply.getValue("status")
          + "; expected success, failed or aborted");
    };
  }
}
