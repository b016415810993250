package io.conveyor.testing;

import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy to Redis that can turn into a black hole: connections stay open but nothing crosses, as
 * with a half-open connection or a partitioned network. Opening it again closes the old connections
 * (their bytes were lost) and lets new ones through.
 */
public final class BlackholeProxy implements AutoCloseable {
  private final Vertx vertx = Vertx.vertx();
  private final NetServer server;
  /**
   * Held for the proxy's life: Vert.x 5 closes a client that is no longer referenced (a cleaner), and its
   * connections with it.
   */
  private final io.vertx.core.net.NetClient client = vertx.createNetClient();
  private final List<NetSocket> sockets = new CopyOnWriteArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private volatile boolean open = true;

  public BlackholeProxy(int redisPort) {
    server = vertx.createNetServer().connectHandler(in -> {
      accepted.incrementAndGet();
      sockets.add(in);
      in.pause();
      client.connect(redisPort, "127.0.0.1").onSuccess(out -> {
        sockets.add(out);
        in.handler(b -> forward(out, b));
        out.handler(b -> forward(in, b));
        in.closeHandler(v -> out.close());
        out.closeHandler(v -> in.close());
        in.resume();
      }).onFailure(e -> in.close());
    });
    server.listen(0, "127.0.0.1").await();
  }

  private void forward(NetSocket to, io.vertx.core.buffer.Buffer b) {
    if (open) {
      to.write(b);
    }
  }

  public int port() {
    return server.actualPort();
  }

  /** Connections accepted so far: a client that gives up on a hung connection and reconnects adds one. */
  public int accepted() {
    return accepted.get();
  }

  public void blackhole() {
    open = false;
  }

  public void reopen() {
    List<NetSocket> old = List.copyOf(sockets);
    sockets.clear();
    open = true;
    old.forEach(NetSocket::close);
  }

  @Override
  public void close() {
    vertx.close().await();
  }
}
