package io.conveyor.api;

import io.conveyor.model.Strict;
import io.conveyor.model.TxException;
import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

/**
 * Who sends a request to the event-bus API: the API key in its apiKey header, never the body. A client key acts
 * for its own owner (a body naming another is refused, 403); an admin key acts for the owner the body names, or
 * its own. The key is checked before the body, so a caller without one learns nothing of the request.
 */
final class BusCaller {
  /** The header that carries the key, as on the bridges (which forward it). */
  static final String HEADER = "apiKey";

  /** A request that passed: its body, whose owner is the one it acts for, and who asked (the key's owner). */
  record Call(JsonObject body, String by) {
  }

  private final ApiKeys keys;

  BusCaller(ApiKeys keys) {
    this.keys = keys;
  }

  /** The call, its body holding no field but these (none named: any, the domain checks them). */
  Future<Call> call(Message<Object> m, String... accepted) {
    ApiKeys.Principal who = keys.authenticate(m.headers().get(HEADER)).orElse(null);
    if (who == null) {
      return Future.failedFuture(new TxException(TxException.Kind.UNAUTHORIZED, "send an API key of api.keys"
          + " in the " + HEADER + " header; this request has " + (m.headers().contains(HEADER) ? "an unknown one"
          : "none"), HEADER, null));
    }
    if (!who.has("client") && !who.has("admin")) {
      return Future.failedFuture(new TxException(TxException.Kind.FORBIDDEN, "a request to " + m.address()
          + " needs a key with the client or admin role", HEADER, null));
    }
    if (!(m.body() instanceof JsonObject body)) {
      return Future.failedFuture(TxException.invalid("body", "expected a JSON object"));
    }
    return (accepted.length == 0 ? Future.succeededFuture(body) : Strict.only(body, accepted))
        .compose(b -> b.getValue("owner") == null || who.has("admin") ? Future.succeededFuture(b)
            : Edge.ownedBy(b, who.owner()))
        .map(b -> new Call(b.getValue("owner") == null ? b.copy().put("owner", who.owner()) : b, who.owner()));
  }
}
