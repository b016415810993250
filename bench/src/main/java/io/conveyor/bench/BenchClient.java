package io.conveyor.bench;

import io.conveyor.Node;
import io.conveyor.domain.Transactions;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.RedisLink;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import java.util.function.Supplier;

/**
 * The client side of the benchmark, deployed on the node's Vert.x so that it shares the node's JVM but
 * has a context of its own: a RedisLink is bound to one context, so every Redis call of the bench runs
 * here, and main reaches in only through {@link #onContext}.
 */
final class BenchClient extends VerticleBase {
  private final Node node;
  private RedisLink link;
  private PipelineStore store;
  private Transactions transactions;
  private Completions completions;

  private String webhook;

  BenchClient(Node node) {
    this.node = node;
  }

  /** Every transaction of later runs carries this webhook URL. */
  BenchClient webhook(String url) {
    this.webhook = url;
    return this;
  }

  /** Subscribes before anything starts, so no completion can slip by. */
  @Override
  public Future<?> start() {
    StoreContext redis = node.redis().open(vertx);
    link = redis.link();
    store = new PipelineStore(redis);
    // the node's workers are offered to these starts as to its API's (see Handoff)
    transactions = new Transactions(redis, node.catalog(), node.config(),
        io.vertx.core.Future.succeededFuture(node.archive()), new NodeMetrics(false), io.conveyor.trace.Tracing.OFF,
        node::handoff);
    completions = new Completions(link, node.redis().keys());
    return completions.subscribe();
  }

  /** Runs work on this verticle's context, from any thread. */
  <T> Future<T> onContext(Supplier<Future<T>> work) {
    Promise<T> result = Promise.promise();
    context.runOnContext(v -> work.get().onComplete(result));
    return result.future();
  }

  /** Fails with IllegalArgumentException when the node knows no such pipeline: a bad option, not a result. */
  Future<Void> checkPipeline(String name) {
    return onContext(() -> node.catalog().groupOf(store, name)).compose(group -> group != null
        ? Future.succeededFuture()
        : Future.failedFuture(new IllegalArgumentException("--pipeline: no pipeline named " + name + " under "
            + node.config().pipelines().dir())));
  }

  /**
   * Starts every transaction and waits for all to finish (without completions, for all starts to reply),
   * or gives up after a timeout that grows with the run; the result then says how far it got.
   */
  Future<Result> run(String label, BenchOptions options, boolean waitForCompletions) {
    return run(label, options, waitForCompletions, null);
  }

  /** The same, with a soak's report of each interval (null: none). */
  Future<Result> run(String label, BenchOptions options, boolean waitForCompletions, SoakReport report) {
    return onContext(() -> {
      Tracker tracker = new Tracker(options.transactions(), waitForCompletions);
      completions.listener(tracker);
      long timeoutMs = 60_000 + options.transactions()
          + (options.rate() > 0 ? (long) (options.transactions() * 1000 / options.rate()) : 0);
      Promise<Boolean> over = Promise.promise();
      tracker.done().onComplete(ar -> over.tryComplete(true));
      long giveUp = vertx.setTimer(timeoutMs, t -> over.tryComplete(false));
      long began = System.nanoTime();
      progress(label, tracker, over.future(), began);
      if (report != null) {
        report.watch(vertx, tracker, over.future());
      }
      new Load(vertx, transactions, tracker, options, webhook).begin();
      return over.future().map(finished -> {
        vertx.cancelTimer(giveUp);
        if (!finished) {
          System.err.printf("bench: %s: gave up after %d s: %d started, %d replied, %d completed of %d%n", label,
              timeoutMs / 1000, tracker.issued(), tracker.replied(), tracker.completed(), options.transactions());
        }
        completions.listener((txId, status, nanos) -> { });
        if (waitForCompletions) {
          System.err.printf("bench: %s: at most %d transactions were started and not yet completed at once%n", label,
              tracker.peakBacklog());
        }
        return tracker.result();
      });
    });
  }

  /** A line to stderr about every second while the run lasts; a chained timer, so lines never pile up. */
  private void progress(String label, Tracker tracker, Future<Boolean> over, long began) {
    vertx.setTimer(1000, t -> {
      if (over.isComplete()) {
        return;
      }
      System.err.printf("bench: %s %.0f s: %d started, %d replied, %d completed%n", label,
          (System.nanoTime() - began) / 1e9, tracker.issued(), tracker.replied(), tracker.completed());
      progress(label, tracker, over, began);
    });
  }

  /** The size of a sorted set. */
  Future<Long> zcard(String key) {
    return onContext(() -> link.send(io.vertx.redis.client.Request.cmd(io.vertx.redis.client.Command.ZCARD).arg(key))
        .map(io.vertx.redis.client.Response::toLong));
  }

  Future<Long> usedMemory() {
    return onContext(() -> RedisChores.usedMemory(link, vertx));
  }

  /** Each master's figures now (one server: itself): CPU seconds and this run's transaction keys. */
  Future<java.util.Map<String, RedisChores.Master>> masters() {
    return onContext(() -> RedisChores.masters(link, vertx, node.redis().keys().prefix()));
  }

  /** The run's keys left in Redis, by family (see RedisChores.census). */
  Future<java.util.Map<String, Long>> census() {
    return onContext(() -> RedisChores.census(link, vertx, node.redis().keys().prefix()));
  }

  /** Completed transactions waiting for the archive: toArchiveZ of every partition. */
  Future<Long> toArchive() {
    return onContext(() -> {
      java.util.List<Future<Long>> each = new java.util.ArrayList<>();
      for (int p : node.redis().keys().all()) {
        each.add(link.send(io.vertx.redis.client.Request.cmd(io.vertx.redis.client.Command.ZCARD)
            .arg(node.redis().keys().toArchiveZ(p))).map(io.vertx.redis.client.Response::toLong));
      }
      return Future.all(each).map(all -> each.stream().mapToLong(Future::result).sum());
    });
  }

  /** What the run's hashes of a family hold (see RedisChores.hashes): the counting keys, after a soak. */
  Future<java.util.Map<String, String>> hashes(String family) {
    return onContext(() -> RedisChores.hashes(link, vertx, node.redis().keys().prefix(), family));
  }

  Future<Long> deleteKeys() {
    return onContext(() -> RedisChores.deletePrefix(link, vertx, node.redis().keys().prefix()));
  }

  @Override
  public Future<?> stop() {
    return completions.close().eventually(link::close);
  }
}
