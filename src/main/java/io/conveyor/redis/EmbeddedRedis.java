package io.conveyor.redis;

import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.RedisServer;

/** The zero-setup Redis: started by a node when none answers at redis.url and redis.embedded allows it. */
public final class EmbeddedRedis {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedRedis.class);
  private final RedisServer server;
  private final int port;

  private EmbeddedRedis(RedisServer server, int port) {
    this.server = server;
    this.port = port;
  }

  /** Starts an embedded Redis if the config calls for one, else null. Blocking: call before Vert.x runs. */
  public static EmbeddedRedis startIfNeeded(Config.Redis cfg) throws IOException {
    if (TlsToRedis.secure(cfg)) {
      return null; // an embedded Redis serves no TLS (the config reader refuses redis.embedded always with rediss://)
    }
    URI uri = URI.create(cfg.url());
    int port = uri.getPort() > 0 ? uri.getPort() : 6379;
    boolean answers = reachable(uri.getHost(), port);
    if (cfg.embedded() == Config.Embedded.NEVER || (answers && cfg.embedded() == Config.Embedded.AUTO)) {
      return null;
    }
    if (answers) {
      throw new ConfigException("redis.embedded is always, but something already listens on " + uri.getHost() + ":"
          + port + "; set redis.embedded to auto to use it, or change redis.url");
    }
    if (!InetAddress.getByName(uri.getHost()).isLoopbackAddress()) {
      throw new ConfigException("redis.url: no Redis answers at " + uri.getHost() + ":" + port
          + ", and an embedded Redis can only be started on a loopback address; start Redis there or fix redis.url");
    }
    RedisServer server = RedisServer.newRedisServer().port(port).bind("127.0.0.1")
        .setting("save \"\"").setting("appendonly no").build();
    server.start();
    log.warn("No Redis answered at {}:{}, so this node started an EMBEDDED Redis 6.2 on 127.0.0.1:{}. "
        + "Its data is NOT durable: it is lost when this node stops. Set redis.url to a real Redis for real work.",
        uri.getHost(), port, port);
    return new EmbeddedRedis(server, port);
  }

  public int port() {
    return port;
  }

  public void stop() {
    try {
      server.stop();
    } catch (IOException e) {
      log.warn("embedded Redis did not stop cleanly: {}", e.getMessage());
    }
  }

  static boolean reachable(String host, int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), 500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
