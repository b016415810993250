package io.conveyor.api;

import io.conveyor.config.Config;
import io.conveyor.config.TlsPair;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServerOptions;
import io.vertx.ext.bridge.BridgeOptions;
import io.vertx.ext.eventbus.bridge.tcp.BridgeEvent;
import io.vertx.ext.eventbus.bridge.tcp.TcpEventBusBridge;
import io.vertx.ext.eventbus.bridge.tcp.impl.protocol.FrameHelper;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TCP event-bus bridge (on when bridge.tcp.port is set): programs in any language send start and
 * status requests as length-prefixed JSON frames, under the rules of {@link BridgeRules}.
 */
public final class BridgeVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(BridgeVerticle.class);
  private final Config.Bridge settings;
  private final Config.BridgeTls tls;
  private final BridgeRules rules;
  private TcpEventBusBridge bridge;

  public BridgeVerticle(Config.Bridge settings, Config.BridgeTls tls, List<Config.ApiKey> keys) {
    this.settings = settings;
    this.tls = tls;
    this.rules = new BridgeRules(settings, keys);
  }

  /** TLS when security.bridge.tls (or the HTTP listener's pair) is set: the pair is read off the event loop, once. */
  @Override
  public Future<?> start() {
    Future<NetServerOptions> options = !tls.enabled() ? Future.succeededFuture(new NetServerOptions())
        : vertx.executeBlocking(() -> TlsPair.load(tls.section(), tls.certFile(), tls.keyFile()))
            .map(pair -> new NetServerOptions().setSsl(true).setKeyCertOptions(pair.options()));
    int port = settings.tcpPort();
    String host = settings.tcpHost();
    return options.compose(o -> {
      bridge = TcpEventBusBridge.create(vertx, rules.permit(new BridgeOptions()), o, this::check);
      return bridge.listen(port, host);
    }).onSuccess(b -> log.info("TCP event-bus bridge on {}:{}{}", host, port, tls.enabled() ? " (TLS)" : ""));
  }

  /**
   * A refusal is answered here with {type: err, message: access_denied, address, reason}; its event is then
   * left open, so the bridge neither sends its own unspecific "blocked by bridgeEvent handler" nor logs.
   */
  private void check(BridgeEvent event) {
    rules.decide(event, (address, refused) -> {
      log.debug("TCP bridge: refused a {} for {}: {}", event.type(), address, refused);
      FrameHelper.writeFrame(BridgeRules.refusalFrame(address, refused, "message"), event.socket());
    });
  }

  @Override
  public Future<?> stop() {
    return bridge == null ? Future.succeededFuture() : bridge.close();
  }
}
