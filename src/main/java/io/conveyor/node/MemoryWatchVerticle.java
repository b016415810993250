package io.conveyor.node;

import io.conveyor.bus.Addresses;
import io.conveyor.bus.MemoryJudged;
import io.conveyor.bus.Messages;
import io.conveyor.config.Config;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.redis.MemoryStore;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's one memory watcher: every redis.memoryCheckInterval it reads used_memory of the master of each
 * partition (memory.lua, routed by the partition's key) against redis.memoryBudget or maxmemory, judges each
 * partition full from redis.memoryHighWater until it is below redis.memoryLowWater, and publishes the verdict
 * (MemoryJudged) to the node's start paths. A crossing is logged, counted in the gauges and recorded as an event
 * (redis-memory-high, redis-memory-ok). A failed reading keeps the last verdict: Redis not answering is the
 * heartbeat's and the readiness check's to report.
 */
public final class MemoryWatchVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(MemoryWatchVerticle.class);
  private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);
  private final RedisAccess redis;
  private final Config.RedisMemory settings;
  private final MemoryMarks marks;
  private final String nodeId;
  private final NodeMetrics metrics;
  private StoreContext context;
  private MemoryStore store;
  private final Map<Integer, Boolean> full = new HashMap<>();
  private long timer = -1;
  private boolean stopping;
  private Future<Void> checking = Future.succeededFuture();

  public MemoryWatchVerticle(RedisAccess redis, Config.RedisMemory settings, String nodeId, NodeMetrics metrics) {
    this.redis = redis;
    this.settings = settings;
    this.marks = new MemoryMarks(settings);
    this.nodeId = nodeId;
    this.metrics = metrics;
  }

  @Override
  public Future<?> start() {
    context = redis.open(vertx);
    store = new MemoryStore(context);
    // the first verdict before the node takes starts: a node that starts on a full Redis refuses at once
    checking = check();
    return checking.onComplete(ar -> next());
  }

  /** The next check is timed from the end of this one, so checks never pile up behind a slow Redis. */
  private void next() {
    if (!stopping) {
      timer = vertx.setTimer(settings.interval().toMillis(), t -> {
        checking = check();
        checking.onComplete(ar -> next());
      });
    }
  }

  private Future<Void> check() {
    List<Future<MemoryJudged.Partition>> each = new ArrayList<>();
    for (int p : context.keys().all()) {
      each.add(judge(p));
    }
    return Future.all(each).<Void>map(all -> {
      List<MemoryJudged.Partition> judged = new ArrayList<>();
      each.forEach(f -> judged.add(f.result()));
      vertx.eventBus().publish(Addresses.REDIS_MEMORY_JUDGED, Messages.encode(new MemoryJudged(judged)), LOCAL);
      return null;
    }).recover(e -> {
      log.debug("memory check failed ({}); the last verdict stands", e.getMessage());
      return Future.succeededFuture();
    });
  }

  /** Reads partition p's master and judges it; a crossing is recorded by a second call that writes the event. */
  private Future<MemoryJudged.Partition> judge(int p) {
    return store.read(p).compose(r -> {
      long limit = marks.limit(r);
      boolean was = full.getOrDefault(p, false);
      boolean now = marks.full(was, r.used(), limit);
      full.put(p, now);
      metrics.redisMemory(p, r.used(), limit, now);
      MemoryJudged.Partition judged = new MemoryJudged.Partition(p, r.used(), limit, now);
      if (was == now) {
        return Future.succeededFuture(judged);
      }
      String kind = now ? "redis-memory-high" : "redis-memory-ok";
      if (now) {
        log.warn("Redis of partition {} is full: {} of {} bytes ({} %) at or above redis.memoryHighWater ({} %): "
            + "new starts get 503 redis-memory until it is below redis.memoryLowWater ({} %); running work goes on",
            p, r.used(), limit, percent(judged.ratio()), percent(settings.highWater()), percent(settings.lowWater()));
      } else if (limit == 0) {
        log.info("Redis of partition {} takes starts again: it has no maxmemory any more (and redis.memoryBudget is 0)",
            p);
      } else {
        log.info("Redis of partition {} takes starts again: {} of {} bytes ({} %), below redis.memoryLowWater ({} %)",
            p, r.used(), limit, percent(judged.ratio()), percent(settings.lowWater()));
      }
      JsonObject details = new JsonObject().put("partition", p).put("used", r.used()).put("limit", limit)
          .put("highWater", settings.highWater()).put("lowWater", settings.lowWater());
      return store.read(p, kind, nodeId, details).map(judged)
          .recover(e -> {
            log.warn("could not record the {} event of partition {}: {}", kind, p, e.getMessage());
            return Future.succeededFuture(judged);
          });
    });
  }

  static long percent(double fraction) {
    return Math.round(fraction * 100);
  }

  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(timer);
    return checking.eventually(context::close);
  }
}
