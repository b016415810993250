package io.conveyor.api;

import io.conveyor.config.Config;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.sockjs.SockJSBridgeOptions;
import io.vertx.ext.web.handler.sockjs.SockJSHandler;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * /eventbus/*: the SockJS event-bus bridge (for web pages: @vertx/eventbus-bridge-client.js), under the TCP
 * bridge's rules (BridgeRules). A refusal is answered here with an err frame the client's reply or message
 * handler gets ({failureCode 403, message "access_denied: address: reason"}); its event is then left open, so
 * the bridge adds no unspecific "rejected" of its own.
 */
public final class SockJsRoutes implements RouteGroup {
  private static final Logger log = LoggerFactory.getLogger(SockJsRoutes.class);
  private final Vertx vertx;
  private final BridgeRules rules;
  private final int maxBodyBytes;

  public SockJsRoutes(Vertx vertx, Config.Bridge bridge, List<Config.ApiKey> keys, int maxBodyBytes) {
    this.vertx = vertx;
    this.rules = new BridgeRules(bridge, keys);
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void mount(Router r) {
    // SockJS's XHR transports post their frames
    r.route("/eventbus/*").handler(BodyHandler.create(false).setBodyLimit(maxBodyBytes));
    r.route("/eventbus/*").subRouter(bridge());
  }

  private Router bridge() {
    return SockJSHandler.create(vertx).bridge(rules.permit(new SockJSBridgeOptions()), event -> rules.decide(event,
        (address, refused) -> {
          log.debug("SockJS bridge: refused a {} for {}: {}", event.type(), address, refused);
          Object reply = event.getRawMessage().getValue("replyAddress");
          event.socket().write(new JsonObject().put("type", "err")
              .put("address", reply instanceof String r ? r : address).put("sourceAddress", address)
              .put("failureCode", 403).put("failureType", "RECIPIENT_FAILURE")
              .put("message", "access_denied: " + address + ": " + refused).toBuffer());
        }));
  }
}
