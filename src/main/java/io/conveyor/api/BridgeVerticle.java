package io.conveyor.api;

import io.conveyor.bus.Addresses;
import io.conveyor.config.Config;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.bridge.BridgeEventType;
import io.vertx.ext.bridge.BridgeOptions;
import io.vertx.ext.bridge.PermittedOptions;
import io.vertx.ext.eventbus.bridge.tcp.BridgeEvent;
import io.vertx.ext.eventbus.bridge.tcp.TcpEventBusBridge;
import io.vertx.ext.eventbus.bridge.tcp.impl.protocol.FrameHelper;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TCP event-bus bridge (on when bridge.tcp.port is set): programs in any language send start and
 * status requests as length-prefixed JSON frames. Every inbound message must carry an API key with the
 * client role in headers.apiKey; the request then acts for the key's owner, whatever owner the body
 * names. Only Conveyor's public addresses are let in; replies go back out, and so do the completion events
 * of conveyor.tx.completed.<owner>, which a client may register for with a key of that owner. A key with
 * the admin role may listen to the facts every node publishes (Addresses.PUBLISHED: completions of every
 * owner, dead nodes, lease changes), read-only. A client with a key of the step role may serve eventbus
 * steps: register for an address matching bridge.tcp.stepAddresses, and reply to the messages it gets there.
 */
public final class BridgeVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(BridgeVerticle.class);
  private final Config.Bridge settings;
  private final ApiKeys keys;
  private final java.util.regex.Pattern stepAddresses;
  private TcpEventBusBridge bridge;

  public BridgeVerticle(Config.Bridge settings, List<Config.ApiKey> keys) {
    this.settings = settings;
    this.keys = new ApiKeys(keys);
    this.stepAddresses = java.util.regex.Pattern.compile(settings.stepAddresses());
  }

  @Override
  public Future<?> start() {
    BridgeOptions permitted = new BridgeOptions()
        .addInboundPermitted(new PermittedOptions().setAddress(Addresses.TX_START))
        .addInboundPermitted(new PermittedOptions().setAddress(Addresses.TX_STATUS))
        .addInboundPermitted(new PermittedOptions().setAddress(Addresses.TX_CANCEL))
        .addInboundPermitted(new PermittedOptions().setAddress(Addresses.TX_SWITCH))
        .addInboundPermitted(new PermittedOptions().setAddress(Addresses.TX_RETRY))
        .addOutboundPermitted(new PermittedOptions().setAddressRegex(
            java.util.regex.Pattern.quote(Addresses.TX_COMPLETED + ".") + ".+"))
        .addOutboundPermitted(new PermittedOptions().setAddressRegex(stepAddresses.pattern()));
    Addresses.PUBLISHED.forEach(a -> permitted.addOutboundPermitted(new PermittedOptions().setAddress(a)));
    bridge = TcpEventBusBridge.create(vertx, permitted, new io.vertx.core.net.NetServerOptions(), this::check);
    int port = settings.tcpPort();
    String host = settings.tcpHost();
    return bridge.listen(port, host).onSuccess(b -> log.info("TCP event-bus bridge on {}:{}", host, port));
  }

  /**
   * Lets a message in only with a valid key, and makes it act for that key's owner. A refusal is answered
   * here with {type: err, message: access_denied, address, reason}; its event is then left open, so the
   * bridge neither sends its own unspecific "blocked by bridgeEvent handler" nor logs anything.
   */
  private void check(BridgeEvent event) {
    BridgeEventType type = event.type();
    if (type != BridgeEventType.SEND && type != BridgeEventType.REGISTER && type != BridgeEventType.PUBLISH) {
      event.complete(true);
      return;
    }
    JsonObject raw = event.getRawMessage();
    String address = String.valueOf(raw.getValue("address"));
    if (type == BridgeEventType.PUBLISH) {
      refuse(event, address, "Conveyor's addresses take send (request/reply), not publish");
      return;
    }
    JsonObject headers = raw.getValue("headers") instanceof JsonObject h ? h : new JsonObject();
    Optional<ApiKeys.Principal> who = keys.authenticate(headers.getValue("apiKey") instanceof String k ? k : null);
    String refused = who.isEmpty() ? "no valid API key in headers.apiKey" : refusal(type, address, who.get());
    if (refused != null) {
      refuse(event, address, refused);
      return;
    }
    headers.remove("apiKey");
    if (isPublic(address) && raw.getValue("body") instanceof JsonObject body) {
      body.put("owner", who.get().owner());
    }
    event.setRawMessage(raw.put("headers", headers));
    event.complete(true);
  }

  private static void refuse(BridgeEvent event, String address, String reason) {
    log.debug("bridge: refused a {} for {}: {}", event.type(), address, reason);
    FrameHelper.writeFrame(new JsonObject().put("type", "err").put("message", "access_denied")
        .put("address", address).put("reason", reason), event.socket());
  }

  /** Why the key may not do this, or null when it may. */
  private String refusal(BridgeEventType type, String address, ApiKeys.Principal who) {
    boolean step = stepAddresses.matcher(address).matches();
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
        Addresses.TX_START, Addresses.TX_STATUS, Addresses.TX_CANCEL, Addresses.TX_SWITCH, Addresses.TX_RETRY);
  }

  private static boolean isPublic(String address) {
    return address.equals(Addresses.TX_START) || address.equals(Addresses.TX_STATUS)
        || address.equals(Addresses.TX_CANCEL) || address.equals(Addresses.TX_SWITCH)
        || address.equals(Addresses.TX_RETRY);
  }

  @Override
  public Future<?> stop() {
    return bridge == null ? Future.succeededFuture() : bridge.close();
  }
}
