package io.conveyor.api;

import io.conveyor.bus.Addresses;
import io.conveyor.domain.Events;
import io.conveyor.domain.Pauses;
import io.conveyor.domain.Transactions;
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
 * same (clustered) Vert.x; each request carries an API key in its apiKey header, and acts for the key's owner
 * (BusCaller).
 */
public final class BusApiVerticle extends VerticleBase {
  private final RedisAccess redis;
  private final Function<StoreContext, Transactions> transactions;
  private final Function<Transactions, Events> eventsOn;
  private final BusCaller caller;
  private final Callers callers;
  private BusAudit audit;
  private Transactions tx;

  /** Who may call (api.keys), and what the audit log needs: the audit settings, the node's id, its metrics. */
  public record Callers(ApiKeys keys, io.conveyor.config.Config.Audit audit, String node,
                        io.conveyor.metrics.NodeMetrics metrics) {
    public static Callers of(io.conveyor.config.Config config, String node, io.conveyor.metrics.NodeMetrics metrics) {
      return new Callers(new ApiKeys(config.api().keys()), config.audit(), node, metrics);
    }
  }

  /**
   * transactions builds the service on this verticle's own Redis context, which it opens at start; eventsOn the
   * business events on that service; callers who may call (BusCaller) and how a request with an admin key is
   * audited (BusAudit).
   */
  public BusApiVerticle(RedisAccess redis, Function<StoreContext, Transactions> transactions,
                        Function<Transactions, Events> eventsOn, Callers callers) {
    this.redis = redis;
    this.caller = new BusCaller(callers.keys());
    this.callers = callers;
    this.transactions = transactions;
    this.eventsOn = eventsOn;
  }

  @Override
  public Future<?> start() {
    tx = transactions.apply(redis.open(vertx));
    audit = new BusAudit(callers.keys(), new AuditLog(tx.context(), callers.metrics(), callers.node(),
        callers.audit().maxWaiting()), tx.context().clock(), callers.audit().reads());
    Pauses pauses = new Pauses(new PauseStore(tx.context()), tx);
    Events events = eventsOn.apply(tx);
    return Future.all(java.util.List.of(
        vertx.eventBus().consumer(Addresses.EVENT_SEND, m -> replyJson(m, caller.call(m, "owner", "name", "key",
            "payload", "id", "deliver").compose(c -> text(c.body(), "owner").isEmpty()
            ? Future.failedFuture(TxException.invalid("owner", "expected an owner"))
            : events.send(text(c.body(), "owner"), c.body()))
            .map(Events.Sent::toJson))).completion(),
        // a traceparent header puts the start under the sender's trace (see Tracing)
        vertx.eventBus().consumer(Addresses.TX_START, m -> reply(m, caller.call(m)
            .compose(c -> tx.start(c.body(), m.headers().get("traceparent"))))).completion(),
        vertx.eventBus().consumer(Addresses.TX_STATUS, m -> reply(m, caller.call(m, "txId", "owner")
            .compose(c -> tx.status(text(c.body(), "txId"), text(c.body(), "owner"))))).completion(),
        // as over HTTP: the summary, with cancelPending while the cancel walk has still to reach some of its tree
        vertx.eventBus().consumer(Addresses.TX_CANCEL, m -> replyJson(m, caller.call(m, "txId", "owner")
            .compose(c -> tx.cancelTree(text(c.body(), "txId"), text(c.body(), "owner")))
            .map(c -> c.pending() == 0 ? c.summary().toJson()
                : c.summary().toJson().put("cancelPending", c.pending())))).completion(),
        vertx.eventBus().consumer(Addresses.TX_RETRY, m -> reply(m, caller.call(m, "txId", "owner", "from")
            .compose(c -> tx.rerun(text(c.body(), "txId"), text(c.body(), "owner"), fromStart(c.body())))))
            .completion(),
        // who paused is the key's owner (an admin's, when it acts for another owner)
        vertx.eventBus().consumer(Addresses.TX_PAUSE, m -> reply(m, caller.call(m, "txId", "owner", "reason", "tree")
            .compose(c -> pauses.pause(text(c.body(), "txId"), text(c.body(), "owner"), c.by(),
                Pauses.pauseAsk(rest(c.body())))))).completion(),
        vertx.eventBus().consumer(Addresses.TX_RESUME, m -> reply(m, caller.call(m, "txId", "owner", "timers", "tree")
            .compose(c -> pauses.resume(text(c.body(), "txId"), text(c.body(), "owner"), c.by(),
                Pauses.resumeAsk(rest(c.body())))))).completion(),
        vertx.eventBus().consumer(Addresses.TX_SWITCH, m -> reply(m, caller.call(m, "txId", "owner", "name", "value")
            .compose(c -> tx.setSwitch(text(c.body(), "txId"), text(c.body(), "owner"), text(c.body(), "name"),
                c.body().getValue("value"))))).completion()));
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

  private void reply(Message<Object> m, Future<TxSummary> answer) {
    replyJson(m, answer.map(TxSummary::toJson));
  }

  /** Replies, and records the request in the audit log when its key has the admin role (BusAudit). */
  private void replyJson(Message<Object> m, Future<JsonObject> answer) {
    long at = audit.now();
    answer.onSuccess(m::reply).onFailure(e -> {
      TxException t = Problems.of(e, m.address());
      m.fail(t.kind().status, t.toJson().encode());
    }).onComplete(ar -> audit.record(m, at, ar));
  }

  @Override
  public Future<?> stop() {
    return tx.close();
  }
}
