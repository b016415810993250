package io.conveyor.redis;

import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.RedisClientType;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import io.vertx.redis.client.impl.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis Cluster link's router: one standalone pipelined link per master, each command sent to the master of its
 * keys' slot, so a master that is down or slow fails only the commands for the slots it holds (the library's
 * cluster client connects to every master before it sends anything, and fails all when one does not answer).
 * The slot map is read (CLUSTER SLOTS) at first use, again soon after a MOVED or an outage (at most twice a
 * second), every REREAD while a master of the map is failing, and every SLOT_CACHE_MS while a master failed in the
 * last minute; commands never wait for a re-read. A silent master (RoutedMaster) counts as failing at once, so a
 * paused master's slots move to its replica soon after the failover. Used from its link's owner's context only.
 */
final class SlotRouter {
  private static final Logger log = LoggerFactory.getLogger(SlotRouter.class);
  /** On-demand re-reads of the map: at most one per this. */
  private static final long REREAD_NANOS = 500_000_000L;
  /** The map is re-read every SLOT_CACHE_MS while a master failed within this. */
  private static final long WATCH_NANOS = 60_000_000_000L;
  /** How long one endpoint may take to give the map before the next is asked. */
  private static final long READ_TIMEOUT_MS = 1000;

  private final Vertx vertx;
  private final RedisOptions options;
  private final Duration timeout;
  private final Ticker ticker;
  /** "redis://" or "rediss://user:password@": the seeds' scheme and credentials, for every master. */
  private final String scheme;
  private final List<String> seeds = new ArrayList<>();
  /** Concurrent only because tests send from their own threads; a node's link is used on one context. */
  private final Map<String, RoutedMaster> masters = new java.util.concurrent.ConcurrentHashMap<>();
  private SlotMap map = SlotMap.EMPTY;
  private Future<SlotMap> reading;
  private long lastRead;
  private boolean rereadArmed;
  private boolean watching;
  /** The armed watch's timer, and whether it is the fast (REREAD) one. */
  private long watchTimer = -1;
  private boolean watchFast;
  private boolean closed;
  /** The periodic check for silent masters (see sending), -1 until the first command. */
  private long silenceCheck = -1;

  SlotRouter(Vertx vertx, RedisOptions options, Duration timeout, Ticker ticker) {
    this.vertx = vertx;
    this.options = options;
    this.timeout = timeout;
    this.ticker = ticker;
    RedisURI first = new RedisURI(options.getEndpoints().get(0));
    this.scheme = first.protocol() + "://" + first.userinfo();
    for (String seed : options.getEndpoints()) {
      RedisURI uri = new RedisURI(seed);
      seeds.add(uri.socketAddress().host() + ":" + uri.socketAddress().port());
    }
    this.lastRead = ticker.nanos() - REREAD_NANOS;
  }

  /**
   * To the master of the request's slot; a keyless request to any master that answers, but SCRIPT (LOAD) and
   * FUNCTION (LOAD) to every master. Failures are raw (the link classifies them).
   */
  Future<Response> send(Request request) {
    int slot = SlotMap.slotOf(request);
    String command = request.command().toString();
    if (slot < 0 && (command.equalsIgnoreCase("script") || command.equalsIgnoreCase("function"))) {
      return mapped().compose(m -> everyMaster(m, request));
    }
    return mapped().compose(m -> send(target(m, slot), request, true));
  }

  /** To the master of the slot of the first request with keys (keyless ones, such as WAIT, ride along). */
  Future<List<Response>> batch(List<Request> requests) {
    int slot = SlotMap.slotOf(requests);
    return mapped().compose(m -> batch(target(m, slot), requests, true));
  }

  /**
   * A connection of its own (pub/sub, blocking), first to a master that answers; a command for another master's
   * slot (SSUBSCRIBE of a partition's channel) opens one there too (see RoutedConnection).
   */
  Future<RedisConnection> dedicated() {
    return mapped().compose(m -> connectAny(ordered(m.masters()), 0, null))
        .map(home -> new RoutedConnection(this, home.getKey(), home.getValue()));
  }

  /** Whether the master of the slot failed more recently than it answered (for per-partition health). */
  boolean failing(int slot) {
    String owner = map.owner(slot);
    RoutedMaster m = owner == null ? null : masters.get(owner);
    return m != null && m.failing();
  }

  /** The master of the slot now, or null when the map names none. */
  String owner(int slot) {
    return map.owner(slot);
  }

  /** The master of the slot (the map read first if need be); a slot no master serves: the first not failing. */
  Future<String> master(int slot) {
    return mapped().map(m -> target(m, slot));
  }

  /** A command sent straight to an endpoint failed there: a MOVED is followed as moved says. */
  void refused(String endpoint, Throwable e) {
    SlotMap.Redirect r = SlotMap.Redirect.of(e, SlotMap.host(endpoint));
    if (r != null && !r.ask()) {
      moved(r);
    }
  }

  /** A connection of its own to one endpoint (its outcome counts for the endpoint's health). */
  Future<RedisConnection> connect(String endpoint) {
    RoutedMaster m = master(endpoint);
    return m.link.dedicated().onComplete(ar -> outcome(m, ar.cause()));
  }

  /** A MOVED reply: the new owner is noted at once, and the whole map re-read soon. */
  void moved(SlotMap.Redirect r) {
    map = map.with(r.slot(), r.endpoint());
    stale();
  }

  Future<Void> close() {
    closed = true;
    vertx.cancelTimer(silenceCheck);
    List<Future<Void>> all = new ArrayList<>();
    masters.values().forEach(m -> all.add(m.link.close()));
    return Future.join(all).mapEmpty();
  }

  private Future<Response> send(String endpoint, Request request, boolean redirect) {
    RoutedMaster m = sending(master(endpoint));
    return m.link.sendRaw(request).transform(ar -> {
      m.answered();
      SlotMap.Redirect r = ar.failed() && redirect ? SlotMap.Redirect.of(ar.cause(), SlotMap.host(endpoint)) : null;
      if (r == null) {
        outcome(m, ar.cause());
        return ar.failed() ? Future.failedFuture(ar.cause()) : Future.succeededFuture(ar.result());
      }
      if (r.ask()) {
        return master(r.endpoint()).link.batchRaw(List.of(Request.cmd(Command.ASKING), request)).map(l -> l.get(1));
      }
      moved(r);
      return send(r.endpoint(), request, false);
    });
  }

  private Future<List<Response>> batch(String endpoint, List<Request> requests, boolean redirect) {
    RoutedMaster m = sending(master(endpoint));
    return m.link.batchRaw(requests).transform(ar -> {
      m.answered();
      SlotMap.Redirect r = ar.failed() && redirect ? SlotMap.Redirect.of(ar.cause(), SlotMap.host(endpoint)) : null;
      if (r == null) {
        outcome(m, ar.cause());
        return ar.failed() ? Future.failedFuture(ar.cause()) : Future.succeededFuture(ar.result());
      }
      if (r.ask()) {
        List<Request> asking = new ArrayList<>(List.of(Request.cmd(Command.ASKING)));
        asking.addAll(requests);
        return master(r.endpoint()).link.batchRaw(asking).map(l -> l.subList(1, l.size()));
      }
      // the batch did not run there (its first keyed command was refused): all of it goes to the new owner
      moved(r);
      return batch(r.endpoint(), requests, false);
    });
  }

  /** Each master's answer to a keyless request, by host:port; a master that refused or did not answer is left out. */
  Future<Map<String, Response>> eachMaster(Request request) {
    return mapped().compose(m -> {
      Map<String, Future<Response>> each = new java.util.LinkedHashMap<>();
      m.masters().forEach(e -> each.put(e, master(e).link.sendRaw(request)));
      return Future.join(new ArrayList<>(each.values())).transform(ar -> {
        Map<String, Response> out = new java.util.LinkedHashMap<>();
        each.forEach((e, f) -> {
          if (f.succeeded()) {
            out.put(e, f.result());
          }
        });
        return Future.succeededFuture(out);
      });
    });
  }

  /** Every master: the first answer, or when none answered, the first failure (a script's error is everyone's). */
  private Future<Response> everyMaster(SlotMap m, Request request) {
    List<Future<Response>> each = new ArrayList<>();
    m.masters().forEach(e -> each.add(send(e, request, false)));
    Promise<Response> answer = Promise.promise();
    each.forEach(f -> f.onSuccess(answer::tryComplete));
    Future.join(each).onComplete(all -> answer.tryFail(each.get(0).cause()));
    return answer.future();
  }

  private Future<Map.Entry<String, RedisConnection>> connectAny(List<String> endpoints, int i, Throwable last) {
    if (i >= endpoints.size()) {
      return Future.failedFuture(last != null ? last : new RedisUnavailable(new IllegalStateException("no master")));
    }
    String e = endpoints.get(i);
    return connect(e).transform(ar -> ar.succeeded() ? Future.succeededFuture(Map.entry(e, ar.result()))
        : connectAny(endpoints, i + 1, ar.cause()));
  }

  /** The slot's master; for a keyless request (or a slot no master serves), the first master not failing. */
  private String target(SlotMap m, int slot) {
    String owner = m.owner(slot);
    return owner != null ? owner : ordered(m.masters()).get(0);
  }

  /** The endpoints with those that failed recently last. */
  private List<String> ordered(List<String> endpoints) {
    List<String> out = new ArrayList<>(endpoints.stream().filter(e -> !master(e).failing()).toList());
    endpoints.stream().filter(e -> !out.contains(e)).forEach(out::add);
    return out;
  }

  private RoutedMaster master(String endpoint) {
    long now = ticker.nanos();
    return masters.computeIfAbsent(endpoint, e -> new RoutedMaster(new RedisLink(vertx, standalone(e), timeout, ticker),
        now, now - WATCH_NANOS - 1));
  }

  /** A master's options: the link's (TLS, credentials, pool, pipelining), standalone, at the master's host:port. */
  private RedisOptions standalone(String endpoint) {
    return new RedisOptions(options).setType(RedisClientType.STANDALONE)
        .setEndpoints(new ArrayList<>(List.of(scheme + endpoint)));
  }

  /**
   * A command goes to m: if m has left earlier ones unanswered for SILENT, it is failing from now. The first one
   * arms the check of every master each SILENT/2, as a verticle whose only call to a stopped master is out sends
   * nothing more there (a take, a batch of completions waits for its answer).
   */
  private RoutedMaster sending(RoutedMaster m) {
    if (silenceCheck < 0 && !closed) {
      silenceCheck = vertx.setPeriodic(RoutedMaster.SILENT_NANOS / 4_000_000, t -> masters.values().forEach(this::silent));
    }
    silent(m);
    m.sent(ticker.nanos());
    return m;
  }

  /** A connection of its own to the endpoint heard nothing for long (Subscriptions): failing from now. */
  void silent(String endpoint) {
    RoutedMaster m = master(endpoint);
    if (!m.failing()) {
      failing(m, ticker.nanos());
    }
  }

  private void silent(RoutedMaster m) {
    long now = ticker.nanos();
    if (m.silent(now)) {
      log.debug("a Redis Cluster master has answered none of {} commands for {} ms: failing, re-reading the slot map",
          m.out(), m.quietMs(now));
      failing(m, now);
    }
  }

  private void failing(RoutedMaster m, long now) {
    m.failedAt = now;
    stale();
    if (watching && !watchFast) {
      // a slow watch is armed (an earlier failure): re-read at the fast pace from now
      vertx.cancelTimer(watchTimer);
      watching = false;
    }
    watch();
  }

  /**
   * A command's outcome on a master: an answer (a refusal such as NOSCRIPT too) says it is up; an outage has the
   * map re-read.
   */
  private void outcome(RoutedMaster m, Throwable e) {
    long now = ticker.nanos();
    Throwable seen = e == null ? null : RedisUnavailable.classifyBatch(e);
    if (!(seen instanceof RedisUnavailable) || seen instanceof RedisUnavailable.Full) {
      m.okAt = now;
      return;
    }
    m.failedAt = now;
    stale();
    watch();
  }

  private Future<SlotMap> mapped() {
    return map.known() ? Future.succeededFuture(map) : read();
  }

  /** Reads the map from the first endpoint that answers: the masters known (answering first), then the seeds. */
  private Future<SlotMap> read() {
    if (reading != null) {
      return reading;
    }
    lastRead = ticker.nanos();
    LinkedHashSet<String> candidates = new LinkedHashSet<>(ordered(map.masters()));
    candidates.addAll(ordered(seeds));
    Future<SlotMap> attempt = readFrom(new ArrayList<>(candidates), 0, null);
    reading = attempt;
    attempt.onComplete(ar -> {
      reading = null;
      if (ar.succeeded()) {
        SlotMap before = map;
        map = ar.result();
        abandonDemoted(before);
      }
    });
    return attempt;
  }

  private Future<SlotMap> readFrom(List<String> endpoints, int i, Throwable last) {
    if (i >= endpoints.size()) {
      return Future.failedFuture(new RedisUnavailable(new IllegalStateException("no Redis Cluster node of "
          + seeds + " gave its slot map: " + (last == null ? "none tried" : last.getMessage()), last)));
    }
    String e = endpoints.get(i);
    // a bound of its own: the first endpoint tried may be a master that just stopped (SIGSTOP: no answer, no close),
    // and a read held for redis.timeout would hold every read after it, so the map would not learn of the failover
    return master(e).link.sendRaw(Request.cmd(Command.CLUSTER).arg("SLOTS"))
        .timeout(Math.min(READ_TIMEOUT_MS, timeout.toMillis()), java.util.concurrent.TimeUnit.MILLISECONDS)
        .map(r -> SlotMap.parse(r, SlotMap.host(e)))
        .compose(m -> m.known() ? Future.succeededFuture(m)
            : Future.failedFuture(new IllegalStateException(e + " serves no slot")))
        .recover(x -> readFrom(endpoints, i + 1, x));
  }

  /**
   * A silent master of the old map that the new one does not name (its replica took over), with commands out: they
   * would hold its partitions' calls until redis.timeout; they fail now (RedisLink.abandon) and go to the new master.
   */
  private void abandonDemoted(SlotMap before) {
    for (String e : before.masters()) {
      RoutedMaster m = masters.get(e);
      // a master that answers (a planned failover, a reshard) answers MOVED, which is followed
      if (m != null && m.out() > 0 && m.failing() && !map.masters().contains(e)) {
        log.info("Redis Cluster master {} serves no slot now (its replica took over): its {} unanswered commands fail "
            + "now and go again to the new master", e, m.out());
        m.link.abandon();
      }
    }
  }

  /** The map may be wrong: re-read now, or once REREAD_NANOS have passed since the last read. */
  private void stale() {
    long wait = lastRead + REREAD_NANOS - ticker.nanos();
    if (closed) {
      return;
    }
    if (wait <= 0) {
      read().onFailure(e -> log.debug("re-reading the Redis Cluster slot map failed: {}", e.getMessage()));
    } else if (!rereadArmed) {
      rereadArmed = true;
      vertx.setTimer(Math.max(1, wait / 1_000_000), t -> {
        rereadArmed = false;
        stale();
      });
    }
  }

  /**
   * While a master failed in the last minute, the map is re-read every SLOT_CACHE_MS (a failover moves slots); while
   * a master the map names is failing, every REREAD, so its slots move to the replica that took over within half a
   * second of the failover.
   */
  private void watch() {
    if (watching || closed) {
      return;
    }
    watching = true;
    watchFast = map.masters().stream().anyMatch(e -> masters.containsKey(e) && masters.get(e).failing());
    watchTimer = vertx.setTimer(watchFast ? REREAD_NANOS / 1_000_000 : RedisLink.SLOT_CACHE_MS, t -> {
      Future<SlotMap> reread = closed ? Future.succeededFuture(map) : read();
      reread.onComplete(ar -> {
        watching = false;
        long now = ticker.nanos();
        if (masters.values().stream().anyMatch(m -> now - m.failedAt < WATCH_NANOS)) {
          watch();
        }
      });
    });
  }
}
