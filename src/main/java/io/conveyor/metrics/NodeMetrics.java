package io.conveyor.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A node's own meters, in the Prometheus registry Vert.x reports into too (served at /metrics). Labels are
 * bounded: step types, scripts, statuses and outcomes are few; owners appear only when
 * metrics.ownerLabels is true; txIds never.
 */
public final class NodeMetrics implements io.conveyor.redis.ScriptMeter {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  /**
   * Histogram buckets, few on purpose: a percentile histogram is ~70 series per label set (an idle node had over a
   * thousand); these keep one under 300 and still tell 1 ms from 10 ms from a second.
   */
  private static final Duration[] WAITS = {Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofMillis(10),
      Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
      Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(30)};
  private static final Duration[] SCRIPTS = {Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofMillis(25),
      Duration.ofMillis(100), Duration.ofSeconds(1)};
  private final boolean ownerLabels;
  private final ConcurrentHashMap<String, Timer> scripts = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Timer> steps = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();
  private final Timer dequeueWait;
  private final DistributionSummary archiveBatch;
  private final Timer archiveWrite;

  public NodeMetrics(boolean ownerLabels) {
    this.ownerLabels = ownerLabels;
    Operator.register(this);
    dequeueWait = Timer.builder("conveyor.dequeue.wait").description("time from a transaction's start to its "
        + "first dequeue").serviceLevelObjectives(WAITS).register(registry);
    archiveBatch = DistributionSummary.builder("conveyor.archive.batch.size").description("transactions per "
        + "archive write").register(registry);
    archiveWrite = Timer.builder("conveyor.archive.batch").description("archive write latency")
        .serviceLevelObjectives(WAITS).register(registry);
    Gauge.builder("conveyor.http.long.polls", longPolls, java.util.concurrent.atomic.AtomicInteger::get)
        .description("long-polls (?wait=N) holding their answer on this node").register(registry);
  }

  /** Long-polls waiting now; each HTTP verticle counts its own in and out, a scrape reads the sum. */
  private final java.util.concurrent.atomic.AtomicInteger longPolls = new java.util.concurrent.atomic.AtomicInteger();

  /** A long-poll began (+1) or ended (-1) its wait. */
  public void longPoll(int delta) {
    longPolls.addAndGet(delta);
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** Prometheus text exposition of every meter. */
  public String scrape() {
    return registry.scrape();
  }

  /**
   * Worker slots in use, as the dequeue verticle last set it from its own context; the gauge and the heartbeat
   * read it. The verticle keeps its slots to itself and only reports the count here.
   */
  private final java.util.concurrent.atomic.AtomicInteger workersBusy = new java.util.concurrent.atomic.AtomicInteger();

  /** The dequeue verticle reports its busy slots (running or writing their completion). */
  public void workersBusy(int n) {
    workersBusy.set(n);
  }

  /** Busy worker slots, as last reported. */
  public int workersBusy() {
    return workersBusy.get();
  }

  /** Per partition: its Redis's used memory over the guard's limit, and whether starts are refused for it. */
  private final ConcurrentHashMap<Integer, java.util.concurrent.atomic.AtomicLongArray> redisMemory =
      new ConcurrentHashMap<>();

  /** The memory watcher's last reading of partition p (limit 0: no guard, ratio 0). */
  public void redisMemory(int partition, long used, long limit, boolean full) {
    // the watcher writes, a scrape reads (another thread): each value as the bits of a double
    java.util.concurrent.atomic.AtomicLongArray values = redisMemory.computeIfAbsent(partition, p -> {
      java.util.concurrent.atomic.AtomicLongArray v = new java.util.concurrent.atomic.AtomicLongArray(2);
      String tag = Integer.toString(p);
      Gauge.builder("conveyor.redis.memory.ratio", v, x -> Double.longBitsToDouble(x.get(0))).tag("partition", tag)
          .description("used_memory of the partition's Redis over redis.memoryBudget or maxmemory").register(registry);
      Gauge.builder("conveyor.redis.memory.full", v, x -> Double.longBitsToDouble(x.get(1))).tag("partition", tag)
          .description("1 while new starts are refused for Redis memory (503 redis-memory)").register(registry);
      return v;
    });
    values.set(0, Double.doubleToLongBits(limit == 0 ? 0 : (double) used / limit));
    values.set(1, Double.doubleToLongBits(full ? 1 : 0));
  }

  /** A start refused because Redis is full (503 redis-memory). */
  public void refusedForMemory() {
    counters.computeIfAbsent("redis-memory-refused", k -> Counter.builder("conveyor.redis.memory.refused")
        .description("starts refused with 503 redis-memory").register(registry)).increment();
  }

  public NodeMetrics busyWorkers(Supplier<Number> busy, int total) {
    Gauge.builder("conveyor.workers.busy", busy).description("worker slots running a transaction")
        .register(registry);
    Gauge.builder("conveyor.workers.slots", () -> total).description("worker slots").register(registry);
    return this;
  }

  public void started(String owner) {
    counter("conveyor.transactions.started", "transactions started through this node", owner, null).increment();
  }

  public void completed(String status, String owner) {
    counter("conveyor.transactions.completed", "transactions this node completed", owner, status).increment();
  }

  private Counter counter(String name, String help, String owner, String status) {
    String o = ownerLabels && owner != null ? owner : null;
    return counters.computeIfAbsent(name + "|" + status + "|" + o, k -> {
      Counter.Builder b = Counter.builder(name).description(help);
      if (status != null) {
        b.tag("status", status);
      }
      if (ownerLabels) {
        b.tag("owner", o == null ? "" : o);
      }
      return b.register(registry);
    });
  }

  public void step(String type, long nanos) {
    steps.computeIfAbsent(type, t -> Timer.builder("conveyor.step.duration").description("step run time")
        .tag("type", t).serviceLevelObjectives(WAITS).register(registry)).record(nanos, TimeUnit.NANOSECONDS);
  }

  public void dequeueWait(Duration d) {
    dequeueWait.record(d.isNegative() ? Duration.ZERO : d);
  }

  @Override
  public void script(String name, long nanos) {
    scripts.computeIfAbsent(name, n -> Timer.builder("conveyor.lua.script").description("Lua script round trip")
        .tag("script", n).serviceLevelObjectives(SCRIPTS).register(registry)).record(nanos, TimeUnit.NANOSECONDS);
  }

  public void webhook(String outcome) {
    counters.computeIfAbsent("webhook|" + outcome, k -> Counter.builder("conveyor.webhook.deliveries")
        .description("webhook delivery attempts by outcome").tag("outcome", outcome).register(registry)).increment();
  }

  /** A failed step will run again under its retry policy. */
  public void retried(String stepType) {
    counters.computeIfAbsent("retry|" + stepType, k -> Counter.builder("conveyor.step.retries")
        .description("failed step attempts that will run again, by step type").tag("type", stepType)
        .register(registry)).increment();
  }

  /** A step declared not idempotent was not run again after a takeover: its transaction ends maybe-ran. */
  public void maybeRan(String stepType) {
    counters.computeIfAbsent("maybe-ran|" + stepType, k -> Counter.builder("conveyor.step.maybe.ran")
        .description("steps declared not idempotent that a lost node may have run, not run again, by step type")
        .tag("type", stepType).register(registry)).increment();
  }

  public void archiveBatch(int size, long nanos) {
    archiveBatch.record(size);
    archiveWrite.record(nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * What became of audit entries (README, Audit log): stored (in the archive), retried (an archive write failed; they
   * wait on auditX to try again), lost (auditX was full: its oldest went; in the log of the node that served them),
   * event-failed (Redis did not take the entry: it is in the log at ERROR).
   */
  public void audit(String result, int count) {
    counters.computeIfAbsent("audit|" + result, k -> Counter.builder("conveyor.audit.entries")
        .description("audit entries of admin acts by what became of them").tag("result", result)
        .register(registry)).increment(count);
  }

  /** Transactions the archive database refused alone, set aside in Redis (archive-quarantine). */
  public void archiveQuarantined(int count) {
    Counter.builder("conveyor.archive.quarantined").description("transactions the archive database refused "
        + "alone, set aside in Redis for an operator").register(registry).increment(count);
  }

  private final java.util.concurrent.atomic.AtomicLong archiveLag = new java.util.concurrent.atomic.AtomicLong();

  /** How long (ms) the oldest due entry of toArchiveZ has waited, as read for a scrape (conveyor.archive.lag). */
  public void archiveLag(long millis) {
    if (registry.find("conveyor.archive.lag").gauge() == null) {
      Gauge.builder("conveyor.archive.lag", archiveLag, a -> a.get() / 1000.0).baseUnit("seconds")
          .description("how long the oldest transaction due for archiving has waited").register(registry);
    }
    archiveLag.set(millis);
  }

  private Timer scheduleLag;

  /**
   * A schedule's fire started its transaction (outcome started), or was skipped (overlap), or missed (catch-up),
   * counted in conveyor_schedule_fires_total{outcome}; a started one's lag (start − planned fire with its jitter)
   * goes to conveyor_schedule_lag_seconds.
   */
  public void scheduleFire(String outcome, long count, long lagMs) {
    counters.computeIfAbsent("schedule|" + outcome, k -> Counter.builder("conveyor.schedule.fires")
        .description("schedule fires by outcome: started, skipped (overlap), missed (catch-up), queued")
        .tag("outcome", outcome).register(registry)).increment(count);
    if (lagMs >= 0) {
      synchronized (this) {
        if (scheduleLag == null) {
          scheduleLag = Timer.builder("conveyor.schedule.lag").description("from a fire's planned time (with its "
              + "jitter) to its transaction's start").serviceLevelObjectives(WAITS).register(registry);
        }
      }
      scheduleLag.record(lagMs, TimeUnit.MILLISECONDS);
    }
  }

  private io.micrometer.core.instrument.MultiGauge held;
  private io.micrometer.core.instrument.MultiGauge running;
  private io.micrometer.core.instrument.MultiGauge waiting;

  /**
   * The node's group as ControlStore.waiting read it (summed over the partitions), as gauges: per limit (a
   * pipeline, or '@' and an owner) conveyor_limit_held (work held back by its rate or cap) and
   * conveyor_limit_running (runs holding a slot of its cap), and conveyor_fair_waiting (starts waiting their
   * owner's turn under fair share). An owner is named only when metrics.ownerLabels is true; else owners'
   * limits are summed under limit "@owners" and waiting is one sum per group. Series of limits that no longer
   * hold anything go.
   */
  public synchronized void limits(String group, io.vertx.core.json.JsonObject view) {
    if (held == null) {
      held = io.micrometer.core.instrument.MultiGauge.builder("conveyor.limit.held").description("transactions "
          + "held back by a limit (a pipeline's, or an owner's: @owner) of the node's group").register(registry);
      running = io.micrometer.core.instrument.MultiGauge.builder("conveyor.limit.running").description("runs "
          + "holding a slot of a concurrency cap (a pipeline's, or an owner's: @owner) in the node's group")
          .register(registry);
      waiting = io.micrometer.core.instrument.MultiGauge.builder("conveyor.fair.waiting").description("starts "
          + "waiting their owner's turn under fair share in the node's group").register(registry);
    }
    held.register(rows(group, "limit", sums(view.getJsonObject("held"), true)), true);
    running.register(rows(group, "limit", sums(view.getJsonObject("running"), true)), true);
    java.util.Map<String, Long> owners = new java.util.TreeMap<>();
    view.getJsonObject("owners").forEach(e -> owners.merge(e.getKey(),
        ((io.vertx.core.json.JsonObject) e.getValue()).getLong("waiting"), Long::sum));
    if (ownerLabels) {
      waiting.register(rows(group, "owner", owners), true);
    } else {
      waiting.register(java.util.List.of(io.micrometer.core.instrument.MultiGauge.Row.of(
          io.micrometer.core.instrument.Tags.of("group", group),
          owners.values().stream().mapToLong(Long::longValue).sum())), true);
    }
  }

  private java.util.Map<String, Long> sums(io.vertx.core.json.JsonObject byLimit, boolean limits) {
    java.util.Map<String, Long> out = new java.util.TreeMap<>();
    if (byLimit != null) {
      byLimit.forEach(e -> out.merge(!ownerLabels && limits && e.getKey().startsWith("@") ? "@owners" : e.getKey(),
          ((Number) e.getValue()).longValue(), Long::sum));
    }
    return out;
  }

  private static java.util.List<io.micrometer.core.instrument.MultiGauge.Row<?>> rows(String group, String label,
      java.util.Map<String, Long> values) {
    java.util.List<io.micrometer.core.instrument.MultiGauge.Row<?>> out = new java.util.ArrayList<>();
    values.forEach((k, v) -> out.add(io.micrometer.core.instrument.MultiGauge.Row.of(
        io.micrometer.core.instrument.Tags.of("group", group, label, k), v)));
    return out;
  }

  /** Operational events by kind (eventsL, as this node's events poll publishes them): conveyor_events_total{kind}. */
  public void event(String kind) {
    operator.event(kind);
  }

  /** This node fenced itself (Redis took it over) and registered again: conveyor_node_fenced_total. */
  public void fenced() {
    operator.fenced();
  }

  /** The stuck list by reason, as read from Redis for a scrape: conveyor_stuck{reason}. */
  public void stuck(java.util.Map<String, Long> byReason) {
    operator.stuck(byReason);
  }

  /** Whether a node holds each role's lease ("role/partition" → held), read for a scrape: conveyor_leader_present. */
  public void leaders(java.util.Map<String, Boolean> held) {
    operator.leaders(held);
  }

  /** Each partition's health as this node sees it: conveyor_partition_state, conveyor_partition_state_changes. */
  public NodeMetrics partitions(io.conveyor.redis.PartitionHealth health) {
    operator.partitions(health);
    return this;
  }

  private Operator operator;

  /** The operator's meters (what conf/prometheus/alerts.yml and the Grafana dashboard read). */
  void operator(Operator o) {
    operator = o;
  }
}
