package io.conveyor.api;

import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;
import io.conveyor.bus.Addresses;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.time.Duration;

/**
 * For a user's own Vert.x application in the Conveyor cluster: start and read transactions over the event
 * bus, with typed answers. A refusal fails the Future with a TxException (its kind, field and txId);
 * no Conveyor node answering fails it with the event bus's ReplyException.
 *
 * <pre>
 * ConveyorClient conveyor = new ConveyorClient(vertx);
 * conveyor.start("order", "acme", new JsonObject().put("sku", "A-1"))
 *     .compose(tx -> conveyor.status(tx.txId(), "acme"))
 *     .onSuccess(tx -> System.out.println(tx.status()));
 * </pre>
 */
public final class ConveyorClient {
  private final Vertx vertx;
  private final DeliveryOptions options;

  public ConveyorClient(Vertx vertx) {
    this(vertx, Duration.ofSeconds(30));
  }

  public ConveyorClient(Vertx vertx, Duration timeout) {
    this.vertx = vertx;
    this.options = new DeliveryOptions().setSendTimeout(timeout.toMillis());
  }

  public Future<TxSummary> start(String type, String owner, JsonObject input) {
    return start(new JsonObject().put("type", type).put("owner", owner).put("input", input));
  }

  /** Starts from a full request: {type, owner, externalId?, metadata?, input?}. */
  public Future<TxSummary> start(JsonObject request) {
    return call(Addresses.TX_START, request);
  }

  public Future<TxSummary> status(String txId, String owner) {
    return call(Addresses.TX_STATUS, new JsonObject().put("txId", txId).put("owner", owner));
  }

  /** Cancels: waiting ones at once, running ones at their next step boundary. */
  public Future<TxSummary> cancel(String txId, String owner) {
    return call(Addresses.TX_CANCEL, new JsonObject().put("txId", txId).put("owner", owner));
  }

  /** Sets a switch; a transaction sleeping on it wakes at once. */
  /** Runs an ended transaction again, from the step that failed or (fromStart) from the first. */
  public Future<TxSummary> retry(String txId, String owner, boolean fromStart) {
    return call(Addresses.TX_RETRY, new JsonObject().put("txId", txId).put("owner", owner)
        .put("from", fromStart ? "start" : "failed"));
  }

  public Future<TxSummary> setSwitch(String txId, String owner, String name, Object value) {
    return call(Addresses.TX_SWITCH, new JsonObject().put("txId", txId).put("owner", owner).put("name", name)
        .put("value", value));
  }

  private Future<TxSummary> call(String address, JsonObject body) {
    return vertx.eventBus().<JsonObject>request(address, body, options)
        .map(m -> TxSummary.fromJson(m.body()))
        .recover(ConveyorClient::refusal);
  }

  /** A failure whose message is a Conveyor problem becomes a TxException; anything else passes as it is. */
  private static Future<TxSummary> refusal(Throwable e) {
    if (e instanceof ReplyException r && r.getMessage() != null && r.getMessage().startsWith("{")) {
      try {
        return Future.failedFuture(TxException.fromJson(new JsonObject(r.getMessage())));
      } catch (DecodeException | IllegalArgumentException notOurs) {
        return Future.failedFuture(e);
      }
    }
    return Future.failedFuture(e);
  }
}
