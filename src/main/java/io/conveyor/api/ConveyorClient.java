package io.conveyor.api;

import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;
import io.conveyor.bus.Addresses;
import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.time.Duration;

/**
 * For a user's own Vert.x application in the Conveyor cluster: start and read transactions over the event
 * bus, with typed answers. A refusal fails the Future with a TxException (its kind, field and txId);
 * no Conveyor node answering within the timeout fails it with the event bus's ReplyException.
 *
 * <p>Within the timeout, a request that found no node listening (one restarting, or the cluster view changing
 * after a pause) is sent again, 250 ms doubling to 2 s apart. A request that got no answer is sent again only
 * when sending it twice does no harm: a status read, a switch, and a start with an externalId (the second
 * send finds the first one's transaction and answers its summary). Those get three tries of a third of the
 * timeout each; a start without an externalId, a cancel and a retry get one try of the whole timeout, as
 * their silence cannot tell "not done" from "done, answer lost". A pause is sent again like a status read; a resume
 * once.
 *
 * <p>Every request carries the client's API key (header apiKey); a request acts for the key's owner, and an owner
 * argument may be null (the key's). Naming another owner is refused (403 forbidden) unless the key is an admin's;
 * no key the nodes know fails 401 unauthorized.
 *
 * <pre>
 * ConveyorClient conveyor = new ConveyorClient(vertx, System.getenv("CONVEYOR_KEY"));
 * conveyor.start("order", "acme", new JsonObject().put("sku", "A-1"))
 *     .compose(tx -> conveyor.status(tx.txId(), "acme"))
 *     .onSuccess(tx -> System.out.println(tx.status()));
 * </pre>
 */
public final class ConveyorClient {
  private static final long FIRST_WAIT_MS = 250;
  private static final long LONGEST_WAIT_MS = 2_000;
  private static final int SILENT_TRIES = 3;
  private final Vertx vertx;
  private final String apiKey;
  private final long timeoutMs;
  private final Ticker ticker = Ticker.SYSTEM;

  /** A client that sends apiKey (a key of api.keys, with the client or admin role) on every request. */
  public ConveyorClient(Vertx vertx, String apiKey) {
    this(vertx, apiKey, Duration.ofSeconds(30));
  }

  public ConveyorClient(Vertx vertx, String apiKey, Duration timeout) {
    if (apiKey == null || apiKey.isEmpty()) {
      throw new IllegalArgumentException("apiKey: expected an API key (java -jar conveyor.jar new-key OWNER client)");
    }
    this.vertx = vertx;
    this.apiKey = apiKey;
    this.timeoutMs = timeout.toMillis();
  }

  public Future<TxSummary> start(String type, String owner, JsonObject input) {
    return start(new JsonObject().put("type", type).put("owner", owner).put("input", input));
  }

  /** Starts from a full request: {type, owner, externalId?, metadata?, input?}. */
  public Future<TxSummary> start(JsonObject request) {
    if (!(request.getValue("externalId") instanceof String)) {
      return call(Addresses.TX_START, request, false);
    }
    String owner = request.getString("owner");
    long[] sends = {0};
    return call(Addresses.TX_START, request, true, sends).recover(e -> {
      // a send before this one started it, its answer lost: the transaction it started is the answer
      if (sends[0] > 1 && e instanceof TxException t && t.kind() == TxException.Kind.DUPLICATE_EXTERNAL_ID
          && t.txId() != null) {
        return status(t.txId(), owner);
      }
      return Future.failedFuture(e);
    });
  }

  public Future<TxSummary> status(String txId, String owner) {
    return call(Addresses.TX_STATUS, new JsonObject().put("txId", txId).put("owner", owner), true);
  }

  /** Cancels: waiting ones at once, running ones at their next step boundary. */
  public Future<TxSummary> cancel(String txId, String owner) {
    return call(Addresses.TX_CANCEL, new JsonObject().put("txId", txId).put("owner", owner), false);
  }

  /** Runs an ended transaction again, from the step that failed or (fromStart) from the first. */
  public Future<TxSummary> retry(String txId, String owner, boolean fromStart) {
    return call(Addresses.TX_RETRY, new JsonObject().put("txId", txId).put("owner", owner)
        .put("from", fromStart ? "start" : "failed"), false);
  }

  /** Sets a switch; a transaction sleeping on it wakes at once. */
  public Future<TxSummary> setSwitch(String txId, String owner, String name, Object value) {
    return call(Addresses.TX_SWITCH, new JsonObject().put("txId", txId).put("owner", owner).put("name", name)
        .put("value", value), true);
  }

  /**
   * Pauses it, and its children and branches, at their next step boundary (README, Pause and resume); reason may
   * be null. Pausing a paused one answers it as it is, so a pause that got no answer is sent again.
   */
  public Future<TxSummary> pause(String txId, String owner, String reason) {
    JsonObject body = new JsonObject().put("txId", txId).put("owner", owner);
    if (reason != null) {
      body.put("reason", reason);
    }
    return call(Addresses.TX_PAUSE, body, true);
  }

  /**
   * Resumes a paused one (and its tree) where it stood: a timer that fell due while paused fires at once, or with
   * skipTimers moves later by the time it was paused. One not paused is refused (409 not-paused).
   */
  public Future<TxSummary> resume(String txId, String owner, boolean skipTimers) {
    return call(Addresses.TX_RESUME, new JsonObject().put("txId", txId).put("owner", owner)
        .put("timers", skipTimers ? "skip" : "fire"), false);
  }

  private Future<TxSummary> call(String address, JsonObject body, boolean idempotent) {
    return call(address, body, idempotent, new long[1]);
  }

  /** Sends until answered, refused, or out of tries or time; sends[0] counts the sends. */
  private Future<TxSummary> call(String address, JsonObject body, boolean idempotent, long[] sends) {
    long deadline = ticker.nanos() + timeoutMs * 1_000_000;
    long tryMs = idempotent ? Math.max(1, timeoutMs / SILENT_TRIES) : timeoutMs;
    return send(address, body, tryMs, deadline, idempotent, sends, 0);
  }

  private Future<TxSummary> send(String address, JsonObject body, long tryMs, long deadline, boolean idempotent,
                                 long[] sends, int retries) {
    long left = (deadline - ticker.nanos()) / 1_000_000;
    sends[0]++;
    return vertx.eventBus().<JsonObject>request(address, body, new DeliveryOptions().addHeader(BusCaller.HEADER, apiKey)
            .setSendTimeout(Math.max(1, Math.min(tryMs, left))))
        .map(m -> TxSummary.fromJson(m.body()))
        .recover(e -> {
          long wait = Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS << Math.min(retries, 4));
          boolean again = e instanceof ReplyException r && (r.failureType() == ReplyFailure.NO_HANDLERS
              || idempotent && r.failureType() == ReplyFailure.TIMEOUT);
          if (again && ticker.nanos() + wait * 1_000_000 < deadline) {
            return vertx.timer(wait).compose(t -> send(address, body, tryMs, deadline, idempotent, sends,
                retries + 1));
          }
          return refusal(e);
        });
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
