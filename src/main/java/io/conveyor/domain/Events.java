package io.conveyor.domain;

import io.conveyor.model.Identifiers;
import io.conveyor.model.TxException;
import io.conveyor.redis.AwaitStore;
import io.conveyor.redis.Code;
import io.conveyor.redis.ControlStore;
import io.vertx.core.Future;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;

/**
 * Business events: {name, key, payload?, id?, deliver?} sent for an owner. event-send.lua records and matches an
 * event in its key's partition; the transactions it was given to may live in other partitions, so each is then
 * woken by its switch await:<step> (set-switch.lua in its own partition). A wake lost between the two (the node
 * died) is not an event lost: the step looks in the event's partition first when its time is up, and a resend
 * with the same id wakes the waiters it was delivered to again (docs/decisions.md).
 */
public final class Events {
  /** What a send did, for the caller: the event's id, its outcome, the transactions woken or started. */
  public record Sent(String id, String outcome, boolean duplicate, List<String> woken, String txId) {
    public JsonObject toJson() {
      JsonObject j = new JsonObject().put("id", id).put("outcome", outcome).put("duplicate", duplicate)
          .put("woken", woken.size());
      return txId == null ? j : j.put("txId", txId);
    }
  }

  private final AwaitStore store;
  private final ControlStore control;
  private final Duration retention;
  private final int maxPayloadBytes;
  /** The pipeline (transaction type) that starts on an event name (startOn), or null. */
  private final Function<String, String> startOn;
  /** Starts a transaction: {type, owner, externalId, input} → its txId. */
  private final Function<JsonObject, Future<String>> start;

  public Events(AwaitStore store, ControlStore control, Duration retention, int maxPayloadBytes,
                Function<String, String> startOn, Function<JsonObject, Future<String>> start) {
    this.store = store;
    this.control = control;
    this.retention = retention;
    this.maxPayloadBytes = maxPayloadBytes;
    this.startOn = startOn;
    this.start = start;
  }

  /** The events of a Transactions service's Redis context; startOn pipelines as the catalog knows them. */
  public static Events on(Transactions tx, io.conveyor.pipeline.PipelineCatalog catalog,
                          io.conveyor.config.Config config) {
    return on(tx, catalog::startsOn, config);
  }

  /** The same, with the transaction type each event name starts (startOn; null: none) given. */
  public static Events on(Transactions tx, Function<String, String> startOn, io.conveyor.config.Config config) {
    return new Events(new AwaitStore(tx.context()), new ControlStore(tx.context()), config.events().retention(),
        config.limits().maxPayloadBytes(), startOn, b -> tx.start(b).map(s -> s.txId())
            .recover(e -> e instanceof TxException t && t.kind() == TxException.Kind.DUPLICATE_EXTERNAL_ID
                ? Future.succeededFuture(t.txId()) : Future.failedFuture(e)));
  }

  /** Sends an event of owner's (the body holds no owner: the caller decided it from the key). */
  public Future<Sent> send(String owner, JsonObject body) {
    String name;
    String key;
    String id;
    String deliver;
    String payload;
    try {
      text(owner, "owner", 256);
      name = name(body.getValue("name"));
      key = text(body.getValue("key"), "key", 256);
      Object givenId = body.getValue("id");
      id = givenId == null ? "ev-" + UUID.randomUUID().toString().replace("-", "") : text(givenId, "id", 128);
      deliver = deliver(body.getValue("deliver"));
      payload = Json.encode(body.getValue("payload", new JsonObject()));
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
    int size = payload.getBytes(StandardCharsets.UTF_8).length;
    if (size > maxPayloadBytes) {
      return Future.failedFuture(TxException.tooLarge("payload", size, maxPayloadBytes));
    }
    String pipeline = startOn.apply(name);
    return store.send(owner, name, key, id, payload, deliver, retention, pipeline != null).compose(s -> {
      boolean again = s.code() == Code.DUPLICATE;
      String outcome = again ? s.outcome() : s.code() == Code.DELIVERED ? "delivered"
          : s.code() == Code.START ? "start" : "kept";
      if (outcome.equals("start") && pipeline != null) {
        Object given = body.getValue("payload", new JsonObject());
        JsonObject input = given instanceof JsonObject p ? p.copy() : new JsonObject().put("payload", given);
        return start.apply(new JsonObject().put("type", pipeline).put("owner", owner)
                .put("externalId", "event:" + name + ":" + id).put("input", input))
            .map(txId -> new Sent(id, "started", again, List.of(), txId));
      }
      return wake(owner, name, key, id, s.waiters()).map(woken -> new Sent(id, outcome.equals("start")
          || outcome.equals("delivered") && woken.isEmpty() && !again ? "kept" : outcome, again, woken, null));
    });
  }

  /**
   * Wakes each waiter's transaction (<txId>:<step>) by its await switch; answers the txIds woken. A waiter whose
   * transaction has ended (cancelled while it waited) gives the event back (event-return.lua): to the next
   * waiter of a 'one' event, or to be kept when nobody else got it.
   */
  private Future<List<String>> wake(String owner, String name, String key, String id, List<String> waiters) {
    List<Future<String>> each = new ArrayList<>();
    for (String w : waiters) {
      each.add(wakeOne(owner, name, key, id, w, 10));
    }
    return Future.all(each).map(all -> each.stream().map(Future::result).filter(t -> t != null).toList());
  }

  private Future<String> wakeOne(String owner, String name, String key, String id, String waiter, int tries) {
    int colon = waiter.lastIndexOf(':');
    String txId = waiter.substring(0, colon);
    return control.setSwitch(txId, owner, "await:" + waiter.substring(colon + 1), id).compose(code -> {
      if (code == Code.SET || tries == 0) {
        return Future.succeededFuture(code == Code.SET ? txId : null);
      }
      return store.takeBack(owner, name, key, id, waiter, retention).compose(next -> next == null
          ? Future.succeededFuture(null) : wakeOne(owner, name, key, id, next, tries - 1));
    });
  }

  private static String name(Object v) {
    if (!(v instanceof String s) || !s.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) {
      throw TxException.invalid("name", "expected an event name of letters, digits, _ . - (at most 64)");
    }
    return s;
  }

  private static String text(Object v, String field, int max) {
    if (!(v instanceof String s) || s.isEmpty()) {
      throw TxException.invalid(field, "expected a non-empty string");
    }
    if (s.length() > max) {
      throw TxException.invalid(field, "at most " + max + " characters, got " + s.length());
    }
    String unclean = Identifiers.problem(s);
    if (unclean != null) {
      throw TxException.invalid(field, unclean);
    }
    return s;
  }

  private static String deliver(Object v) {
    if (v == null) {
      return "all";
    }
    if (!"one".equals(v) && !"all".equals(v)) {
      throw TxException.invalid("deliver", "expected one or all, got " + v);
    }
    return (String) v;
  }
}
