package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import io.vertx.redis.client.ResponseType;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A subscription to one channel per partition, each partition's on its own: one connection per master (the one
 * Redis, or on a Redis Cluster the master of the partitions' slots), so a master that is down or gone costs only
 * the partitions it holds. A partition whose subscription failed or whose connection ended is tried again alone,
 * 250 ms after, doubling to 2 s, until Redis confirms it (then subscribed says so) or the owner closes; a subscribe
 * Redis refuses (NOPERM, MOVED, CLUSTERDOWN) is a failure like any other. Each connection is
 * named (CLIENT SETNAME) so an operator sees whose it is. Used from its owner's context only.
 */
public final class Subscriptions {
  private static final Logger log = LoggerFactory.getLogger(Subscriptions.class);
  static final long FIRST_RETRY_MS = 250;
  static final long MAX_RETRY_MS = 2_000;
  /** Each master's connection is PINGed this often, and counts as lost when it has said nothing for SILENT. */
  static final long PING_EVERY_MS = 1_000;
  static final long SILENT_MS = 3_000;

  private final Vertx vertx;
  private final RedisLink link;
  private final Keys keys;
  private final String name;
  /** Each partition's channel, by partition and by channel. */
  private final Map<Integer, String> channelOf = new HashMap<>();
  private final Map<String, Integer> partitionOf = new HashMap<>();
  private final BiConsumer<Integer, String> heard;
  private final IntConsumer subscribed;
  /** The connection to each master, opened on first use (one that failed to open is opened anew). */
  private final Map<String, Future<RedisConnection>> masters = new HashMap<>();
  /** The connection each partition is subscribed on. */
  private final Map<Integer, Future<RedisConnection>> on = new HashMap<>();
  /** Each connection's subscribes not yet answered, oldest first (see confirmed). */
  private final Map<RedisConnection, Deque<Unconfirmed>> unconfirmed = new HashMap<>();
  /** The delay before a partition's next try; absent while it is subscribed or a try is out. */
  private final Map<Integer, Long> backoff = new HashMap<>();
  private boolean closed;
  /** When each connection last said anything (a reply, a push), ticker nanos: a paused master says nothing. */
  private final Map<RedisConnection, Long> heardAt = new HashMap<>();
  private long pinger = -1;

  /**
   * channels: each partition's channel. heard gets each message (its partition and text); subscribed, each
   * partition whose subscription is (again) in place, so what was published meanwhile may have been missed.
   */
  public Subscriptions(Vertx vertx, StoreContext redis, String name, Map<Integer, String> channels,
                       BiConsumer<Integer, String> heard, IntConsumer subscribed) {
    this.vertx = vertx;
    this.link = redis.link();
    this.keys = redis.keys();
    this.name = name;
    this.heard = heard;
    this.subscribed = subscribed;
    channels.forEach((p, ch) -> {
      channelOf.put(p, ch);
      partitionOf.put(ch, p);
    });
  }

  /**
   * Subscribes every partition; succeeds once each has been tried and one at least is subscribed (the others are
   * tried again on their own), fails when none could be (nothing is left open then).
   */
  public Future<Void> start() {
    pinger = vertx.setPeriodic(PING_EVERY_MS, t -> ping());
    List<Future<Void>> each = new ArrayList<>();
    channelOf.keySet().forEach(p -> each.add(subscribe(p)));
    return Future.join(each).transform(ar -> {
      if (each.stream().anyMatch(Future::succeeded)) {
        return Future.succeededFuture();
      }
      Throwable first = each.get(0).cause();
      return close().transform(x -> Future.failedFuture(first));
    });
  }

  /** One partition: its slot's master (on a Redis Cluster), that master's connection, and the subscribe there. */
  private Future<Void> subscribe(int p) {
    String channel = channelOf.get(p);
    return link.masterOf(channel).compose(master -> {
      Future<RedisConnection> conn = connection(master);
      return conn.compose(c -> confirmed(c, channel).timeout(link.timeoutMs(), TimeUnit.MILLISECONDS))
          .onFailure(e -> {
            link.refusedOn(master, e);
            if (e instanceof TimeoutException && conn.succeeded()) {
              ended(master, conn.result(), "no reply in " + link.timeoutMs() + " ms"); // a hung master
            }
          })
          .compose(ok -> {
            if (closed || masters.get(master) != conn) {
              return Future.failedFuture(new RedisUnavailable(new IllegalStateException("the connection ended")));
            }
            on.put(p, conn);
            return Future.<Void>succeededFuture();
          });
    }).onSuccess(v -> {
      if (backoff.remove(p) != null) {
        log.info("the {} subscription of partition {} is back", name, p);
      }
      subscribed.accept(p);
    }).onFailure(e -> retry(p, e.getMessage()));
  }

  /**
   * Sends the subscribe and answers when Redis confirms it. The client completes a (S)SUBSCRIBE's send once it is
   * written (its replies are pushes), so a refusal (NOPERM, MOVED, CLUSTERDOWN) reaches the connection's handler as
   * an error, once taken for success: the partition counted as subscribed, and nothing subscribed it again. Redis
   * answers a connection's commands in order, so an error is the reply to the oldest subscribe not yet answered.
   */
  private Future<Void> confirmed(RedisConnection c, String channel) {
    Unconfirmed sent = new Unconfirmed(channel, Promise.promise());
    Deque<Unconfirmed> queue = unconfirmed.computeIfAbsent(c, k -> new ArrayDeque<>());
    queue.add(sent);
    c.send(keys.subscribe(channel)).onFailure(e -> {
      queue.remove(sent); // not written: no reply will come for it
      sent.answer().tryFail(e);
    });
    return sent.answer().future();
  }

  /** A subscribe sent on a connection and not yet answered. */
  private record Unconfirmed(String channel, Promise<Void> answer) {
  }

  private void retry(int p, String why) {
    if (closed) {
      return;
    }
    long delay = Math.min(MAX_RETRY_MS, backoff.getOrDefault(p, FIRST_RETRY_MS / 2) * 2);
    backoff.put(p, delay);
    log.debug("subscribing {} to partition {} failed ({}); again in {} ms", name, p, why, delay);
    vertx.setTimer(delay, t -> {
      if (!closed) {
        subscribe(p);
      }
    });
  }

  /** The master's connection, named, with its handlers; opened when there is none (or the last failed to open). */
  private Future<RedisConnection> connection(String master) {
    Future<RedisConnection> current = masters.get(master);
    if (current != null && !current.failed()) {
      return current;
    }
    Future<RedisConnection> opening = link.dedicated(master).compose(c -> {
      if (closed) {
        c.close();
        return Future.failedFuture(new RedisUnavailable(new IllegalStateException("the subscriptions are closed")));
      }
      c.handler(push -> pushed(c, push));
      c.endHandler(v -> ended(master, c, "closed"));
      c.exceptionHandler(e -> ended(master, c, e.getMessage()));
      return c.send(Request.cmd(Command.CLIENT).arg("SETNAME").arg(name)).map(ok -> c)
          .onFailure(e -> c.close());
    });
    // a master that accepts connections but does not answer (stopped) must not hold its partitions' tries forever,
    // nor for redis.timeout: the map may name it until its replica has taken over
    Future<RedisConnection> opened = opening.timeout(Math.min(link.timeoutMs(), SILENT_MS), TimeUnit.MILLISECONDS);
    opened.onFailure(e -> opening.onSuccess(RedisConnection::close)); // given up: a late one is closed
    masters.put(master, opened);
    return opened;
  }

  /**
   * A master that stops without closing its connections (SIGSTOP, a hang) sends nothing more, and a subscription
   * on it would wait, silent, until it came back: its partitions' completions unannounced, a long-poll answering only
   * at its end. So each connection is PINGed every PING_EVERY_MS, and one that has said nothing for SILENT_MS is
   * ended (its partitions subscribed again, on the master the slot map names once its replica took over) and its
   * master reported silent, so the map is re-read.
   */
  private void ping() {
    long now = link.ticker().nanos();
    new HashMap<>(masters).forEach((master, f) -> {
      if (!f.succeeded()) {
        return;
      }
      RedisConnection c = f.result();
      long heard = heardAt.computeIfAbsent(c, k -> now);
      if (now - heard > SILENT_MS * 1_000_000) {
        link.silent(master);
        ended(master, c, "nothing heard in " + SILENT_MS + " ms, a PING unanswered");
      } else {
        c.send(Request.cmd(Command.PING)).onSuccess(r -> heardAt.put(c, link.ticker().nanos()));
      }
    });
  }

  private void pushed(RedisConnection c, Response push) {
    heardAt.put(c, link.ticker().nanos());
    if (closed || push == null) {
      return;
    }
    if (push.type() == ResponseType.ERROR) {
      Unconfirmed refused = unconfirmed.getOrDefault(c, new ArrayDeque<>()).poll();
      if (refused != null) {
        refused.answer().tryFail(push instanceof Throwable t ? t : new IllegalStateException(push.toString()));
      }
      return;
    }
    if (push.type() != ResponseType.PUSH && push.type() != ResponseType.MULTI || push.size() < 2) {
      return;
    }
    String kind = String.valueOf(push.get(0));
    String channel = String.valueOf(push.get(1));
    Integer p = partitionOf.get(channel);
    if (p == null) {
      return;
    }
    if (kind.equals("subscribe") || kind.equals("ssubscribe")) {
      Deque<Unconfirmed> queue = unconfirmed.getOrDefault(c, new ArrayDeque<>());
      queue.stream().filter(u -> u.channel().equals(channel)).findFirst().ifPresent(u -> {
        queue.remove(u);
        u.answer().tryComplete();
      });
    } else if (Keys.isMessage(push)) {
      heard.accept(p, push.get(2).toString());
    } else if ("sunsubscribe".equals(kind) && on.remove(p) != null) {
      // Redis drops a shard channel's subscribers when its slot moves to another master (resharding)
      retry(p, "its slot moved");
    }
  }

  /** A master's connection ended: closed once, and each partition it served tried again on its own. */
  private void ended(String master, RedisConnection c, String why) {
    heardAt.remove(c);
    Deque<Unconfirmed> unanswered = unconfirmed.remove(c);
    if (unanswered != null) {
      unanswered.forEach(u -> u.answer().tryFail(new RedisUnavailable(new IllegalStateException(why))));
    }
    Future<RedisConnection> conn = masters.get(master);
    if (closed || conn == null || !conn.succeeded() || conn.result() != c) {
      return;
    }
    masters.remove(master);
    c.close(); // back to the pool, which drops it: a lost connection must not count as lent forever
    TreeSet<Integer> lost = new TreeSet<>();
    on.forEach((p, f) -> {
      if (f == conn) {
        lost.add(p);
      }
    });
    lost.forEach(on::remove);
    log.warn("the {} subscription of partitions {} on {} was lost ({}); subscribing them again", name, lost,
        master.isEmpty() ? "Redis" : master, why);
    lost.forEach(p -> retry(p, why));
  }

  /** Whether the partition's subscription is in place now. */
  public boolean subscribed(int p) {
    return on.containsKey(p);
  }

  /** Stops the retries and closes every connection. */
  public Future<Void> close() {
    closed = true;
    vertx.cancelTimer(pinger);
    heardAt.clear();
    List<Future<Void>> all = new ArrayList<>();
    masters.values().forEach(f -> {
      if (f.succeeded()) {
        all.add(f.result().close());
      }
    });
    masters.clear();
    on.clear();
    unconfirmed.clear();
    return Future.join(all).mapEmpty();
  }
}
