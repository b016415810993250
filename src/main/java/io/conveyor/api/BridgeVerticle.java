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

  /** Lets a message in only with a valid key, and makes it act for that key's owner. */
  private void check(BridgeEvent event) {
    BridgeEventType type = event.type();
    if (type == BridgeEventType.PUBLISH) {
      event.complete(false); // Conveyor's addresses are request/reply
      return;
    }
    if (type != BridgeEventType.SEND && type != BridgeEventType.REGISTER) {
      event.complete(true);
      return;
    }
    JsonObject raw = event.getRawMessage();
    JsonObject headers = raw.getValue("headers") instanceof JsonObject h ? h : new JsonObject();
    Optional<ApiKeys.Principal> who = keys.authenticate(headers.getValue("apiKey") instanceof String k ? k : null);
    String address = String.valueOf(raw.getValue("address"));
    if (who.isEmpty() || !allowed(type, address, who.get())) {
      log.debug("bridge: refused a {} for {} (no key, or not its role or owner)", type, address);
      event.complete(false);
      return;
    }
    headers.remove("apiKey");
    if (isPublic(address) && raw.getValue("body") instanceof JsonObject body) {
      body.put("owner", who.get().owner());
    }
    event.setRawMessage(raw.put("headers", headers));
    event.complete(true);
  }

  private boolean allowed(BridgeEventType type, String address, ApiKeys.Principal who) {
    boolean step = stepAddresses.matcher(address).matches();
    if (type == BridgeEventType.REGISTER) {
      // a step server registers for step addresses; a client hears only of its own owner's completions;
      // an operator (admin) hears the facts of the whole cluster
      return step ? who.has("step") : Addresses.PUBLISHED.contains(address) ? who.has("admin")
          : who.has("client") && Addresses.completedFor(who.owner()).equals(address);
    }
    // a send is a client's request, or a step server's reply (the bridge checks the reply address is real)
    return isPublic(address) ? who.has("client") : who.has("step");
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
