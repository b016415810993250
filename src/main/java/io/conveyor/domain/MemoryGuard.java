package io.conveyor.domain;

import io.conveyor.bus.Addresses;
import io.conveyor.bus.MemoryJudged;
import io.conveyor.bus.Messages;
import io.conveyor.config.Config;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.TxException;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.util.Locale;

/**
 * The start path's view of Redis memory: the last verdict the node's memory watcher published, as heard on the
 * context that opened it (a local consumer there sets it, so it is read and written on that context only).
 * Opened off any context (a shell client, a test thread) it hears nothing and refuses nothing.
 */
final class MemoryGuard {
  private final Config.RedisMemory settings;
  private final NodeMetrics metrics;
  private final MessageConsumer<JsonObject> consumer;
  private MemoryJudged last = MemoryJudged.NONE;

  MemoryGuard(Config.RedisMemory settings, NodeMetrics metrics) {
    this.settings = settings;
    this.metrics = metrics;
    Context context = Vertx.currentContext();
    consumer = context == null ? null : context.owner().eventBus().<JsonObject>localConsumer(
        Addresses.REDIS_MEMORY_JUDGED, m -> last = Messages.decode(m.body(), MemoryJudged.class));
  }

  MemoryJudged last() {
    return last;
  }

  /** The refusal of a start in partition p while its Redis is judged full, else null. */
  TxException refusal(int partition, String txId) {
    MemoryJudged.Partition p = last.of(partition);
    return p == null || !p.full() ? null : refusal(p, txId);
  }

  /** The refusal of any start while every partition's Redis is judged full, else null. */
  TxException refusalOfAll() {
    return last.allFull() ? refusal(last.fullest(), null) : null;
  }

  private TxException refusal(MemoryJudged.Partition p, String txId) {
    metrics.refusedForMemory();
    return TxException.redisFull("Redis is full: its memory is at " + percent(p.ratio()) + " % of "
        + mib(p.limit()) + " (redis.memoryHighWater " + percent(settings.highWater()) + " %), so new starts are "
        + "refused until it is below redis.memoryLowWater (" + percent(settings.lowWater()) + " %); running "
        + "transactions finish and are archived, which frees it. Retry after " + retryAfter() + " s", txId,
        retryAfter());
  }

  /** A verdict can change only at the next check: the earliest a retry may be answered otherwise. */
  int retryAfter() {
    return (int) Math.max(1, (settings.interval().toMillis() + 999) / 1000);
  }

  /** The refusal of a start that Redis itself refused for memory (the guard had not seen it coming). */
  TxException refusedByRedis(Throwable cause, String txId) {
    metrics.refusedForMemory();
    return TxException.redisFull(cause.getMessage() + "; " + txId + " was not started", txId, retryAfter());
  }

  static long percent(double fraction) {
    return Math.round(fraction * 100);
  }

  private static String mib(long bytes) {
    return bytes % (1 << 20) == 0 ? (bytes >> 20) + " MiB" : String.format(Locale.ROOT, "%.1f MiB",
        bytes / 1048576.0);
  }

  Future<Void> close() {
    return consumer == null ? Future.succeededFuture() : consumer.unregister();
  }
}
