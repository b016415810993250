package io.conveyor.metrics;

import io.conveyor.redis.PartitionHealth;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The meters an operator's alerts and dashboard read (conf/prometheus, conf/grafana): events by kind, this node's
 * fences, stuck work by reason, whether each leader role has a leader and each partition's health. The series the alerts need exist from
 * the first scrape (at 0), so an alert on them never waits for a first occurrence to have a series.
 */
final class Operator {
  /** Event kinds counted from the start (others get a series when they first occur). */
  static final List<String> KINDS = List.of("node-dead", "stuck", "webhook-url-paused", "webhook-exhausted",
      "archive-quarantined", "redis-memory-high");
  static final List<String> REASONS = List.of("running", "sleeping", "retrying", "waiting", "held");
  private final MeterRegistry registry;
  private final Map<String, Counter> events = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> stuck = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> leaders = new ConcurrentHashMap<>();
  private final Counter fenced;

  private Operator(MeterRegistry registry) {
    this.registry = registry;
    KINDS.forEach(this::counter);
    REASONS.forEach(reason -> gauge(stuck, reason, "conveyor.stuck", "reason", "transactions that look running "
        + "but are wedged, by reason (the reaper leaders' stuck list, read from Redis at each scrape)"));
    // counted from the first refusal on (NodeMetrics.refusedForMemory); here so that it has a series at 0 before
    Counter.builder("conveyor.redis.memory.refused").description("starts refused with 503 redis-memory")
        .register(registry);
    fenced = Counter.builder("conveyor.node.fenced").description("times this node found Redis had taken it over "
        + "(silent past heartbeat.ttl), dropped its work and registered again").register(registry);
  }

  static void register(NodeMetrics metrics) {
    metrics.operator(new Operator(metrics.registry()));
  }

  void event(String kind) {
    counter(kind).increment();
  }

  void fenced() {
    fenced.increment();
  }

  void stuck(Map<String, Long> byReason) {
    byReason.forEach((reason, n) -> gauge(stuck, reason, "conveyor.stuck", "reason", "transactions that look "
        + "running but are wedged, by reason").set(n));
  }

  void leaders(Map<String, Boolean> held) {
    held.forEach((rolePartition, yes) -> gauge(leaders, rolePartition, "conveyor.leader.present", null,
        "1 while a node holds the role's lease in the partition (read from Redis at each scrape), else 0")
        .set(yes ? 1 : 0));
  }

  /**
   * Per partition, conveyor_partition_state{partition, state}: 1 for the state this node sees it in (ok, suspect,
   * failing), 0 for the others (one series per state, the Prometheus form of an enum); and
   * conveyor_partition_state_changes_total{partition}. Both read the node's PartitionHealth at each scrape.
   */
  void partitions(PartitionHealth health) {
    for (int p = 0; p < health.partitions(); p++) {
      int partition = p;
      String tag = Integer.toString(p);
      for (PartitionHealth.State s : PartitionHealth.State.values()) {
        Gauge.builder("conveyor.partition.state", health, h -> h.state(partition) == s ? 1 : 0)
            .tag("partition", tag).tag("state", s.wire()).description("1 for the state this node sees the "
                + "partition's Redis in (ok, suspect: a call out past redis.partitionSuspectAfter, failing: no answer)")
            .register(registry);
      }
      FunctionCounter.builder("conveyor.partition.state.changes", health, h -> h.changes(partition))
          .tag("partition", tag).description("times this node saw the partition's state change").register(registry);
    }
  }

  private Counter counter(String kind) {
    return events.computeIfAbsent(kind, k -> Counter.builder("conveyor.events").tag("kind", k)
        .description("operational events (eventsL) by kind, as this node read them; every node reads all")
        .register(registry));
  }

  /** A gauge per key; with label null the key is "role/partition" and gives two labels. */
  private AtomicLong gauge(Map<String, AtomicLong> values, String key, String name, String label, String help) {
    return values.computeIfAbsent(key, k -> {
      AtomicLong v = new AtomicLong();
      Gauge.Builder<AtomicLong> b = Gauge.builder(name, v, AtomicLong::get).description(help);
      if (label != null) {
        b.tag(label, k);
      } else {
        String[] rp = k.split("/", 2);
        b.tag("role", rp[0]).tag("partition", rp[1]);
      }
      b.register(registry);
      return v;
    });
  }
}
