package io.conveyor.api;

import io.conveyor.bus.Addresses;
import io.conveyor.model.AuditEntry;
import io.vertx.core.AsyncResult;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.time.Clock;

/**
 * The audit entry of an event-bus API request made with an admin key (README, Audit log): the key's id and owner,
 * the address as action, the txId (or else the owner acted for) as target, how it ended (the status the reply failed
 * with, 200 when it succeeded), via "bridge" when a bridge forwarded it, else "bus". A request without a valid key
 * names nobody and is not recorded, nor one with a key without the admin role (a client's own act); a status read
 * only with audit.reads.
 */
final class BusAudit {
  /** The header a bridge sets on what it forwards (its value "bridge"); any other value reads as the bus. */
  static final String VIA = "conveyorVia";
  private final ApiKeys keys;
  private final AuditLog audit;
  private final Clock clock;
  private final boolean reads;

  BusAudit(ApiKeys keys, AuditLog audit, Clock clock, boolean reads) {
    this.keys = keys;
    this.audit = audit;
    this.clock = clock;
    this.reads = reads;
  }

  /** Records the request once answered (at: when it came). */
  void record(Message<Object> m, long at, AsyncResult<?> answer) {
    ApiKeys.Principal who = keys.authenticate(m.headers().get(BusCaller.HEADER)).orElse(null);
    if (who == null || !who.has("admin") || m.address().equals(Addresses.TX_STATUS) && !reads) {
      return;
    }
    var problem = answer.succeeded() ? null : Problems.of(answer.cause(), m.address()).kind();
    int status = problem == null ? 200 : problem.status;
    String error = problem == null ? null : problem.type;
    JsonObject body = m.body() instanceof JsonObject b ? b : new JsonObject();
    String target = body.getValue("txId") instanceof String t ? t
        : body.getValue("owner") instanceof String o ? o : "";
    JsonObject params = new JsonObject().put("actedFor", AuditEntry.clean(body.getValue("owner") instanceof String o
        ? o : who.owner())).put("bodyFields", body.fieldNames().stream().limit(50).map(AuditEntry::clean).sorted()
        .toList());
    String via = "bridge".equals(m.headers().get(VIA)) ? "bridge" : "bus";
    audit.record(new AuditEntry(0, at, who.keyId(), AuditEntry.clean(who.owner()), m.address(),
        AuditEntry.clean(target), AuditEntry.outcome(status), status, error, "", via, audit.node(), params));
  }

  /** When a request came (the injected clock). */
  long now() {
    return clock.millis();
  }
}
