package io.conveyor.api;

import io.conveyor.bus.Addresses;
import io.conveyor.config.Config;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.bridge.BridgeEventType;
import io.vertx.ext.bridge.BridgeOptions;
import io.vertx.ext.bridge.PermittedOptions;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What the event-bus bridges (TCP, and SockJS on the HTTP port) let through; both apply the same rules.
 * Every inbound message must carry an API key in headers.apiKey. A key with the client role sends requests
 * to Conveyor's public addresses, acting for the key's owner whatever owner the body names, and may hear
 * its own owner's completions (conveyor.tx.completed.owner). A key with the admin role may listen to the
 * facts every node publishes (Addresses.PUBLISHED), read-only. A key with the step role may serve eventbus
 * steps: register for an address matching bridge.tcp.stepAddresses, and reply to what it gets there.
 */
final class BridgeRules {
  private final ApiKeys keys;
  private final Pattern stepAddresses;

  BridgeRules(Config.Bridge settings, List<Config.ApiKey> keys) {
    this.keys = new ApiKeys(keys);
    this.stepAddresses = Pattern.compile(settings.stepAddresses());
  }

  /** The bridge's own address filter (a second fence behind check). */
  <T extends BridgeOptions> T permit(T options) {
    for (String a : List.of(Addresses.TX_START, Addresses.TX_STATUS, Addresses.TX_CANCEL, Addresses.TX_SWITCH,
        Addresses.TX_RETRY, Addresses.TX_PAUSE, Addresses.TX_RESUME, Addresses.EVENT_SEND)) {
      options.addInboundPermitted(new PermittedOptions().setAddress(a));
    }
    options.addOutboundPermitted(new PermittedOptions().setAddressRegex(
        Pattern.quote(Addresses.TX_COMPLETED + ".") + ".+"));
    options.addOutboundPermitted(new PermittedOptions().setAddressRegex(stepAddresses.pattern()));
    Addresses.PUBLISHED.forEach(a -> options.addOutboundPermitted(new PermittedOptions().setAddress(a)));
    return options;
  }

  /**
   * Checks one inbound frame: null when it may pass (then a request's body names the key's owner and its
   * headers keep the key for the event-bus API; a step's reply has lost it), else why it is refused (the frame
   * is left as it was).
   */
  String check(BridgeEventType type, JsonObject raw) {
    if (type != BridgeEventType.SEND && type != BridgeEventType.REGISTER && type != BridgeEventType.PUBLISH) {
      return null; // unregister (of this connection's own registrations), pings, socket events
    }
    String address = String.valueOf(raw.getValue("address"));
    if (type == BridgeEventType.PUBLISH) {
      return "Conveyor's addresses take send (request/reply), not publish";
    }
    JsonObject headers = raw.getValue("headers") instanceof JsonObject h ? h : new JsonObject();
    Optional<ApiKeys.Principal> who = keys.authenticate(headers.getValue("apiKey") instanceof String k ? k : null);
    String refused = who.isEmpty() ? "no valid API key in headers.apiKey" : refusal(type, address, who.get());
    if (refused != null) {
      return refused;
    }
    if (isPublic(address) && raw.getValue("body") instanceof JsonObject named
        && Edge.ownerRefusal(named, who.get().owner()) != null) {
      return Edge.ownerRefusal(named, who.get().owner());
    }
    if (!isPublic(address)) {
      headers.remove("apiKey"); // a step's reply goes to the node that asked, which needs no key
    } else if (raw.getValue("body") instanceof JsonObject body) {
      body.put("owner", who.get().owner()); // the key stays: the event-bus API checks it again (BusCaller)
    }
    if (isPublic(address)) {
      headers.put(BusAudit.VIA, "bridge"); // what the audit log names as the way it came (BusAudit)
    }
    raw.put("headers", headers);
    return null;
  }

  /**
   * Decides a bridge event: lets it pass (its frame rewritten by check), or hands the refused address and why
   * to refuse, which answers the client itself. A refused event is left open, so the bridge neither sends
   * its own unspecific refusal nor logs one.
   */
  void decide(io.vertx.ext.bridge.BaseBridgeEvent event, java.util.function.BiConsumer<String, String> refuse) {
    JsonObject raw = event.getRawMessage();
    String refused = raw == null ? null : check(event.type(), raw);
    if (refused == null) {
      if (raw != null) {
        event.setRawMessage(raw);
      }
      event.complete(true);
    } else {
      refuse.accept(String.valueOf(raw.getValue("address")), refused);
    }
  }

  /** The frame a refusal answers with. */
  static JsonObject refusalFrame(String address, String reason, String messageField) {
    return new JsonObject().put("type", "err").put(messageField, "access_denied").put("address", address)
        .put("reason", reason);
  }

  /** Why the key may not do this, or null when it may. */
  private String refusal(BridgeEventType type, String address, ApiKeys.Principal who) {
    // config refuses a regex that can match conveyor.*; checked here too, as those addresses carry API keys
    boolean step = stepAddresses.matcher(address).matches() && !address.startsWith("conveyor.");
    if (type == BridgeEventType.REGISTER) {
      // a step server registers for step addresses; a client hears only of its own owner's completions;
      // an operator (admin) hears the facts of the whole cluster
      if (step) {
        return who.has("step") ? null : "registering for a step address needs a key with the step role";
      }
      if (Addresses.PUBLISHED.contains(address)) {
        return who.has("admin") ? null : "listening to " + address + " needs a key with the admin role";
      }
      return who.has("client") && Addresses.completedFor(who.owner()).equals(address) ? null
          : "a client key may listen to " + Addresses.completedFor(who.owner()) + " only (its owner's completions)";
    }
    // a send is a client's request, or a step server's reply (the bridge checks the reply address is real)
    if (isPublic(address)) {
      return who.has("client") ? null : "a request to " + address + " needs a key with the client role";
    }
    return who.has("step") ? null : "a key without the step role may send only to " + String.join(", ",
        Addresses.TX_START, Addresses.TX_STATUS, Addresses.TX_CANCEL, Addresses.TX_SWITCH, Addresses.TX_RETRY,
        Addresses.TX_PAUSE, Addresses.TX_RESUME, Addresses.EVENT_SEND);
  }

  private static boolean isPublic(String address) {
    return address.equals(Addresses.TX_START) || address.equals(Addresses.TX_STATUS)
        || address.equals(Addresses.TX_CANCEL) || address.equals(Addresses.TX_SWITCH)
        || address.equals(Addresses.TX_RETRY) || address.equals(Addresses.TX_PAUSE)
        || address.equals(Addresses.TX_RESUME) || address.equals(Addresses.EVENT_SEND);
  }
}
