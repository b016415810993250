package io.conveyor.api;

import io.conveyor.bus.Addresses;
import io.conveyor.domain.Events;
import io.conveyor.domain.Pauses;
import io.conveyor.domain.Transactions;
import io.conveyor.model.Strict;
import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.PauseStore;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.function.Function;

/**
 * Start, status, cancel, retry, pause, resume and switches as request/reply event-bus addresses, for programs in the
 * same (clustered) Vert.x.
 */
public final class BusApiVerticle extends VerticleBase {
  private final RedisAccess redis;
  private final Function<StoreContext, Transactions> transactions;
  private final Function<Transactions, Events> eventsOn;
  private Transactions tx;

  /**
   * transactions builds the service on this verticle's own Redis context, which it opens at start; eventsOn the
   * business events on that service.
   */
  public BusApiVerticle(RedisAccess redis, Function<StoreContext, Transactions> transactions,
                        Function<Transactions, Events> eventsOn) {
    this.redis = redis;
    this.transactions = transactions;
    this.eventsOn = eventsOn;
  }

  @Override
  public Future<?> start() {
    tx = transactions.apply(redis.open(vertx));
    Pauses pauses = new Pauses(new PauseStore(tx.context()), tx);
    Events events = eventsOn.apply(tx);
    return Future.all(java.util.List.of(
        // the owner is the body's: a clustered client is trusted, and the bridges put the key's owner there
        vertx.eventBus().consumer(Addresses.EVENT_SEND, m -> replyJson(m, body(m, "owner", "name", "key", "payload",
            "id", "deliver").compose(b -> b.getValue("owner") instanceof String owner && !owner.isEmpty()
                ? events.send(owner, b) : Future.failedFuture(TxException.invalid("owner", "expected an owner")))
            .map(Events.Sent::toJson))).completion(),
        // a traceparent header puts the start under the sender's trace (see Tracing)
        vertx.eventBus().consumer(Addresses.TX_START, m -> reply(m, body(m)
            .compose(b -> tx.start(b, m.headers().get("traceparent"))))).completion(),
        vertx.eventBus().consumer(Addresses.TX_STATUS, m -> reply(m, body(m, "txId", "owner")
            .compose(b -> tx.status(text(b, "txId"), text(b, "owner"))))).completion(),
        // as over HTTP: the summary, with cancelPending while the cancel walk has still to reach some of its tree
        vertx.eventBus().consumer(Addresses.TX_CANCEL, m -> replyJson(m, body(m, "txId", "owner")
            .compose(b -> tx.cancelTree(text(b, "txId"), text(b, "owner")))
            .map(c -> c.pending() == 0 ? c.summary().toJson()
                : c.summary().toJson().put("cancelPending", c.pending())))).completion(),
        vertx.eventBus().consumer(Addresses.TX_RETRY, m -> reply(m, body(m, "txId", "owner", "from")
            .compose(b -> tx.rerun(text(b, "txId"), text(b, "owner"), fromStart(b))))).completion(),
        // who paused is the body's owner (as above)
        vertx.eventBus().consumer(Addresses.TX_PAUSE, m -> reply(m, body(m, "txId", "owner", "reason", "tree")
            .compose(b -> pauses.pause(text(b, "txId"), text(b, "owner"), text(b, "owner"),
                Pauses.pauseAsk(rest(b)))))).completion(),
        vertx.eventBus().consumer(Addresses.TX_RESUME, m -> reply(m, body(m, "txId", "owner", "timers", "tree")
            .compose(b -> pauses.resume(text(b, "txId"), text(b, "owner"), text(b, "owner"),
                Pauses.resumeAsk(rest(b)))))).completion(),
        vertx.eventBus().consumer(Addresses.TX_SWITCH, m -> reply(m, body(m, "txId", "owner", "name", "value")
            .compose(b -> tx.setSwitch(text(b, "txId"), text(b, "owner"), text(b, "name"), b.getValue("value")))))
            .completion()));
  }

  /** The body less txId and owner: what a pause or resume asks. */
  private static JsonObject rest(JsonObject body) {
    JsonObject out = body.copy();
    out.remove("txId");
    out.remove("owner");
    return out;
  }

  /** A retry's from: absent or failed (the step that failed), or start. */
  private static boolean fromStart(JsonObject body) {
    String from = text(body, "from");
    if (from != null && !from.equals("failed") && !from.equals("start")) {
      throw TxException.invalid("from", "expected failed (the default) or start, got " + from);
    }
    return "start".equals(from);
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

  /** The body, holding no field but these. */
  private static Future<JsonObject> body(Message<Object> m, String... accepted) {
    return body(m).compose(j -> Strict.only(j, accepted));
  }

  private static void reply(Message<Object> m, Future<TxSummary> answer) {
    replyJson(m, answer.map(TxSummary::toJson));
  }

  private static void replyJson(Message<Object> m, Future<JsonObject> answer) {
    answer.onSuccess(m::reply).onFailure(e -> {
      TxException t = Problems.of(e, m.address());
      m.fail(t.kind().status, t.toJson().encode());
    });
  }

  @Override
  public Future<?> stop() {
    return tx.close();
  }
}
