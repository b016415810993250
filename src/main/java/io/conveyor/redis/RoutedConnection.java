package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A dedicated connection on a Redis Cluster (SlotRouter.dedicated): one connection to a master that answered (the
 * home one, for keyless commands such as SUBSCRIBE, which any master hears), and one more to each master whose slot
 * a command names (SSUBSCRIBE of a partition's channel, BLPOP on a partition's list), opened on first use. Pushes,
 * ends and errors of any of them reach the one handler of each kind, as the library's cluster connection did, so an
 * owner that reconnects when its connection ends does so when any master's does (the partitions' channels use
 * Subscriptions instead, which resubscribes only the partitions of the master that ended). CLIENT commands (SETNAME) are
 * replayed on each connection opened after them. Used from its owner's context only.
 */
final class RoutedConnection implements RedisConnection {
  private final SlotRouter router;
  private final String home;
  private final Map<String, Future<RedisConnection>> open = new LinkedHashMap<>();
  private final List<Request> setup = new ArrayList<>();
  private Handler<Response> handler;
  private Handler<Throwable> exceptionHandler;
  private Handler<Void> endHandler;
  private boolean closed;

  RoutedConnection(SlotRouter router, String home, RedisConnection first) {
    this.router = router;
    this.home = home;
    open.put(home, Future.succeededFuture(install(first)));
  }

  @Override
  public Future<Response> send(Request request) {
    int slot = SlotMap.slotOf(request);
    String endpoint = endpoint(slot);
    if (slot < 0 && request.command().toString().equalsIgnoreCase("client")) {
      setup.add(request);
    }
    return on(endpoint).compose(c -> c.send(request)).recover(e -> {
      SlotMap.Redirect r = SlotMap.Redirect.of(e, SlotMap.host(endpoint));
      if (r == null || r.ask()) {
        return Future.failedFuture(e);
      }
      router.moved(r);
      return on(r.endpoint()).compose(c -> c.send(request));
    });
  }

  @Override
  public Future<List<Response>> batch(List<Request> requests) {
    return on(endpoint(SlotMap.slotOf(requests))).compose(c -> c.batch(requests));
  }

  private String endpoint(int slot) {
    String owner = slot < 0 ? null : router.owner(slot);
    return owner == null ? home : owner;
  }

  /** The connection to the endpoint, opened (and set up) on first use; one that failed to open is tried anew. */
  private Future<RedisConnection> on(String endpoint) {
    if (closed) {
      return Future.failedFuture(new RedisUnavailable(new IllegalStateException("the connection is closed")));
    }
    Future<RedisConnection> current = open.get(endpoint);
    if (current != null && !current.failed()) {
      return current;
    }
    List<Request> replay = List.copyOf(setup);
    Future<RedisConnection> opened = router.connect(endpoint).compose(c -> {
      if (closed) {
        c.close();
        return Future.failedFuture(new RedisUnavailable(new IllegalStateException("the connection is closed")));
      }
      install(c);
      return replay.isEmpty() ? Future.succeededFuture(c) : c.batch(replay).map(ok -> c);
    });
    open.put(endpoint, opened);
    return opened;
  }

  private RedisConnection install(RedisConnection c) {
    c.handler(push -> {
      if (handler != null && !closed) {
        handler.handle(push);
      }
    });
    c.exceptionHandler(e -> {
      if (exceptionHandler != null && !closed) {
        exceptionHandler.handle(e);
      }
    });
    c.endHandler(v -> {
      if (endHandler != null && !closed) {
        endHandler.handle(v);
      }
    });
    return c;
  }

  private List<RedisConnection> connections() {
    return open.values().stream().filter(Future::succeeded).map(Future::result).toList();
  }

  @Override
  public RedisConnection exceptionHandler(Handler<Throwable> h) {
    exceptionHandler = h;
    return this;
  }

  @Override
  public RedisConnection handler(Handler<Response> h) {
    handler = h;
    return this;
  }

  @Override
  public RedisConnection endHandler(Handler<Void> h) {
    endHandler = h;
    return this;
  }

  @Override
  public RedisConnection pause() {
    connections().forEach(RedisConnection::pause);
    return this;
  }

  @Override
  public RedisConnection resume() {
    connections().forEach(RedisConnection::resume);
    return this;
  }

  @Override
  public RedisConnection fetch(long amount) {
    connections().forEach(c -> c.fetch(amount));
    return this;
  }

  @Override
  public boolean pendingQueueFull() {
    return connections().stream().anyMatch(RedisConnection::pendingQueueFull);
  }

  /** Closes every connection (each goes back to its master's pool, which drops it); a second close does nothing. */
  @Override
  public Future<Void> close() {
    if (closed) {
      return Future.succeededFuture();
    }
    closed = true;
    List<Future<Void>> all = new ArrayList<>();
    connections().forEach(c -> all.add(c.close()));
    return Future.join(all).mapEmpty();
  }
}
