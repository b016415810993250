package io.conveyor.api;

import static io.conveyor.api.HttpIo.body;
import static io.conveyor.api.HttpIo.json;
import static io.conveyor.api.HttpIo.owner;

import io.conveyor.domain.Events;
import io.conveyor.model.TxException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * POST /api/v1/events (client or admin role): a business event for the key's owner, which wakes the owner's
 * flow/await steps of its name and key (see domain/Events). A client key acts for its own owner only; an admin key
 * may name the owner the event is for (absent: its own). An event is admitted like a start (starts.admit): not while
 * Redis is under its memory guard (503), and within the owner's start rate (429), since it is kept for
 * events.retention and may start a transaction (startOn): one owner's flood of events must not fill the Redis the
 * others share.
 */
public record EventRoutes(Events events, TransactionRoutes starts) implements RouteGroup {
  @Override
  public void mount(Router r) {
    r.post("/api/v1/events").handler(ctx -> json(ctx, body(ctx, "name", "key", "payload", "id", "deliver", "owner")
        .compose(b -> ownerFor(ctx, b).compose(owner -> starts.admit(ctx, owner)
            .compose(v -> events.send(owner, b.copy().put("owner", null)))))
        .map(Events.Sent::toJson)));
  }

  /** The owner an event is for: an admin key's choice, else the key's own (a client naming another is refused). */
  static Future<String> ownerFor(RoutingContext ctx, JsonObject body) {
    ApiKeys.Principal who = ctx.get(HttpIo.PRINCIPAL);
    Object named = body.getValue("owner");
    if (named != null && !(named instanceof String s && !s.isEmpty())) {
      return Future.failedFuture(TxException.invalid("owner", "expected the name of an owner"));
    }
    if (named != null && who.has("admin")) {
      return Future.succeededFuture((String) named);
    }
    return Edge.ownedBy(body, owner(ctx)).map(b -> owner(ctx));
  }
}
