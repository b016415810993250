package io.conveyor.api;

import io.conveyor.bus.Addresses;
import io.conveyor.domain.Transactions;
import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

/** Start and status as request/reply event-bus addresses, for programs in the same (clustered) Vert.x. */
public final class BusApiVerticle extends VerticleBase {
  private final Transactions.Factory factory;
  private Transactions tx;

  public BusApiVerticle(Transactions.Factory factory) {
    this.factory = factory;
  }

  @Override
  public Future<?> start() {
    tx = factory.open(vertx);
    return Future.all(
        vertx.eventBus().consumer(Addresses.TX_START, m -> reply(m, body(m).compose(tx::start))).completion(),
        vertx.eventBus().consumer(Addresses.TX_STATUS, m -> reply(m, body(m)
            .compose(b -> tx.status(text(b, "txId"), text(b, "owner"))))).completion(),
        vertx.eventBus().consumer(Addresses.TX_CANCEL, m -> reply(m, body(m)
            .compose(b -> tx.cancel(text(b, "txId"), text(b, "owner"))))).completion(),
        vertx.eventBus().consumer(Addresses.TX_SWITCH, m -> reply(m, body(m)
            .compose(b -> tx.setSwitch(text(b, "txId"), text(b, "owner"), text(b, "name"), b.getValue("value")))))
            .completion());
  }

  /** A field that must be a string when present; anything else is refused as invalid, not failed as a bug. */
  private static String text(JsonObject body, String field) {
    Object v = body.getValue(field);
    if (v != null && !(v instanceof String)) {
      throw TxException.invalid(field, "expected a string");
    }
    return (String) v;
  }

  private static Future<JsonObject> body(Message<Object> m) {
    return m.body() instanceof JsonObject j ? Future.succeededFuture(j)
        : Future.failedFuture(TxException.invalid("body", "expected a JSON object"));
  }

  private static void reply(Message<Object> m, Future<TxSummary> answer) {
    answer.onSuccess(s -> m.reply(s.toJson())).onFailure(e -> {
      TxException t = Problems.of(e, m.address());
      m.fail(t.kind().status, t.toJson().encode());
    });
  }

  @Override
  public Future<?> stop() {
    return tx.close();
  }
}
