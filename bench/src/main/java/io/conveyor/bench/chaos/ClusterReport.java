package io.conveyor.bench.chaos;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The figures of a redis-cluster run: start latencies (first try to acknowledgement) per partition and phase, by when
 * the start was first sent: BEFORE the fault (its last 10 s; earlier is warm-up), DURING it until the cluster was ok
 * again, AFTER; completions per second per partition (from each transaction's own "completed" time), starts without
 * externalId made DURING, what was acknowledged and lost, and when the faulted partitions took starts again.
 */
final class ClusterReport {
  private static final String[] PHASES = {"WARMUP", "BEFORE", "DURING", "AFTER"};
  private static final long BEFORE_NANOS = 10_000_000_000L;
  private final List<PartitionLoad.Start> starts;
  private final ClusterTally tally;
  private final int partitions;
  private final Set<Integer> dead;
  private final long t0;
  private final long t1;
  private final long beginNanos;
  private final long beginWall;

  ClusterReport(Collection<PartitionLoad.Start> starts, ClusterTally tally, int partitions, Set<Integer> dead,
                long t0, long t1, long beginNanos, long beginWall) {
    this.starts = List.copyOf(starts);
    this.tally = tally;
    this.partitions = partitions;
    this.dead = dead;
    this.t0 = t0;
    this.t1 = t1;
    this.beginNanos = beginNanos;
    this.beginWall = beginWall;
  }

  /** -1: the warm-up before BEFORE (not reported); 0: BEFORE, the 10 s before the fault; 1: DURING; 2: AFTER. */
  int phase(PartitionLoad.Start s) {
    return s.firstSent < t0 - BEFORE_NANOS ? -1 : s.firstSent < t0 ? 0 : s.firstSent < t1 ? 1 : 2;
  }

  int partition(PartitionLoad.Start s) {
    return ClusterRedis.partitionOf(s.txId, partitions);
  }

  int lost() {
    return tally.lost();
  }

  /** The nearest-rank percentile of the latencies (ms) of the acknowledged starts that pass; NaN if none. */
  private double[] stats(Predicate<PartitionLoad.Start> which) {
    double[] l = starts.stream().filter(PartitionLoad.Start::ok).filter(which).mapToDouble(
        PartitionLoad.Start::latencyMs).sorted().toArray();
    if (l.length == 0) {
      return new double[] {0, Double.NaN, Double.NaN, Double.NaN};
    }
    return new double[] {l.length, rank(l, 0.50), rank(l, 0.99), l[l.length - 1]};
  }

  private static double rank(double[] sorted, double q) {
    return sorted[Math.max(0, (int) Math.ceil(q * sorted.length) - 1)];
  }

  private static String cell(double[] st) {
    return st[0] == 0 ? "0" : String.format(Locale.ROOT, "%d / %.0f / %.0f / %.0f", (long) st[0], st[1], st[2], st[3]);
  }

  double duringSeconds() {
    return t1 == Long.MAX_VALUE ? Double.NaN : (t1 - t0) / 1e9;
  }

  /** Seconds from the fault until a start of a faulted partition, sent after the fault, was acknowledged. */
  double resumeSeconds() {
    return starts.stream().filter(PartitionLoad.Start::ok).filter(s -> dead.contains(partition(s)) && s.lastSent >= t0)
        .mapToLong(s -> s.acked - t0).min().stream().mapToDouble(n -> n / 1e9).findFirst().orElse(Double.NaN);
  }

  /** Completions per second of the run (second 0 = the load's start), per partition. */
  long[][] completions() {
    long lastSec = Math.max(1, (System.currentTimeMillis() - beginWall) / 1000 + 1);
    long[][] c = new long[partitions][(int) lastSec];
    for (PartitionLoad.Start s : starts) {
      JsonObject j = tally.bySeq.get(s.seq);
      int p = partition(s);
      if (j == null || p < 0 || j.getString("completed") == null) {
        continue;
      }
      long sec = (Instant.parse(j.getString("completed")).toEpochMilli() - beginWall) / 1000;
      if (sec >= 0 && sec < c[p].length) {
        c[p][(int) sec]++;
      }
    }
    return c;
  }

  /**
   * The load's seconds with no completion, longest run: from the partition's first completion (the nodes' first
   * seconds, their JIT and the first step's 200 ms, are not a stall) to the last second a start was sent.
   */
  private static int longestStall(long[] perSecond, int from, int to) {
    int first = from;
    while (first < Math.min(to, perSecond.length) && perSecond[first] == 0) {
      first++;
    }
    int best = 0;
    int run = 0;
    for (int i = first; i < Math.min(to, perSecond.length); i++) {
      run = perSecond[i] == 0 ? run + 1 : 0;
      best = Math.max(best, run);
    }
    return best;
  }

  private int lastSendSecond() {
    return (int) ((starts.stream().mapToLong(s -> s.firstSent).max().orElse(beginNanos) - beginNanos) / 1_000_000_000L);
  }

  String markdown() {
    StringBuilder out = new StringBuilder();
    out.append("| partition | faulted | BEFORE (10 s) n / p50 / p99 / max ms | DURING n / p50 / p99 / max ms "
        + "| AFTER n / p50 / p99 / max ms | longest second-run without a completion | completions/s, median |\n");
    out.append("|---|---|---|---|---|---|---|\n");
    long[][] c = completions();
    int to = lastSendSecond() + 1;
    for (int p = 0; p < partitions; p++) {
      int part = p;
      out.append("| ").append(p).append(" | ").append(dead.contains(p) ? "yes" : "no");
      for (int ph = 0; ph < 3; ph++) {
        int phase = ph;
        out.append(" | ").append(cell(stats(s -> partition(s) == part && phase(s) == phase)));
      }
      long[] sorted = java.util.Arrays.stream(c[p], 1, Math.min(to, c[p].length)).sorted().toArray();
      out.append(" | ").append(longestStall(c[p], 1, to)).append(" s | ")
          .append(sorted.length == 0 ? 0 : sorted[sorted.length / 2]).append(" |\n");
    }
    for (boolean faulted : new boolean[] {false, true}) {
      out.append("| ").append(faulted ? "faulted, together" : "healthy, together").append(" | ")
          .append(faulted ? "yes" : "no");
      for (int ph = 0; ph < 3; ph++) {
        int phase = ph;
        out.append(" | ").append(cell(stats(s -> partition(s) >= 0 && dead.contains(partition(s)) == faulted
            && phase(s) == phase)));
      }
      out.append(" |  |  |\n");
    }
    List<PartitionLoad.Start> noExt = starts.stream().filter(s -> s.externalId == null && phase(s) == 1).toList();
    double[] ne = stats(s -> s.externalId == null && phase(s) == 1);
    out.append('\n').append(String.format(Locale.ROOT, "DURING lasted %.1f s (fault to cluster ok); the faulted "
        + "partitions took a start sent after the fault %.1f s after it.%n", duringSeconds(), resumeSeconds()));
    out.append(String.format(Locale.ROOT, "Starts without externalId sent DURING: %d, acknowledged %d (p50 %.0f ms, "
        + "p99 %.0f ms, max %.0f ms), failed %d (%s).%n", noExt.size(), (long) ne[0], ne[1], ne[2], ne[3],
        noExt.stream().filter(s -> s.refused).count(), failures(noExt)));
    long unacked = starts.stream().filter(s -> !s.ok() && s.externalId != null).count();
    out.append(String.format(Locale.ROOT, "Acknowledged but lost: %d (404 %d, not final %d); with externalId never "
        + "acknowledged: %d; statuses %s.%n", lost(), tally.notFound, tally.unfinished, unacked, tally.statuses));
    return out.toString();
  }

  private static String failures(List<PartitionLoad.Start> list) {
    java.util.Map<Integer, Long> by = new java.util.TreeMap<>();
    list.stream().filter(s -> s.refused).forEach(s -> by.merge(s.status, 1L, Long::sum));
    return by.isEmpty() ? "none" : by.entrySet().stream().map(e -> (e.getKey() == -1 ? "no answer" : "HTTP "
        + e.getKey()) + " " + e.getValue()).reduce((a, b) -> a + ", " + b).orElse("");
  }

  /** The healthy partitions' DURING p99 and max, for the run's line. */
  String headline() {
    double[] h = stats(s -> partition(s) >= 0 && !dead.contains(partition(s)) && phase(s) == 1);
    double[] f = stats(s -> dead.contains(partition(s)) && phase(s) == 1);
    return String.format(Locale.ROOT, "DURING %.1f s: healthy partitions' start p99 %.0f ms (max %.0f, n %d), faulted"
        + " partitions' p99 %.0f ms (n %d); faulted partitions took starts again after %.1f s; acknowledged-but-lost"
        + " %d",
        duringSeconds(), h[2], h[3], (long) h[0], f[2], (long) f[0], resumeSeconds(), lost());
  }

  /** Per partition, its completions in each second of the run (second 0 = the load's start), one line each. */
  String completionSeries() {
    long[][] c = completions();
    StringBuilder out = new StringBuilder(String.format(Locale.ROOT, "completions per second (the fault in second "
        + "%d):%n", (t0 - beginNanos) / 1_000_000_000L));
    for (int p = 0; p < partitions; p++) {
      List<String> row = new ArrayList<>();
      for (long n : c[p]) {
        row.add(Long.toString(n));
      }
      out.append("p").append(p).append(dead.contains(p) ? " (faulted)" : "").append(": ")
          .append(String.join(" ", row)).append('\n');
    }
    return out.toString();
  }

  /** One line per start: seq, kind, partition, phase, sent and acknowledged (ms from the load's start), latency. */
  void writeRaw(Path file) throws IOException {
    List<String> lines = new ArrayList<>(List.of("seq\texternalId\tpartition\tphase\tsentMs\tackedMs\tlatencyMs"
        + "\ttries\tstatus\ttxId\tfinal"));
    for (PartitionLoad.Start s : starts) {
      JsonObject j = tally.bySeq.get(s.seq);
      lines.add(String.join("\t", Integer.toString(s.seq), s.externalId == null ? "-" : s.externalId,
          Integer.toString(partition(s)), PHASES[phase(s) + 1], ms(s.firstSent), s.ok() ? ms(s.acked) : "-",
          s.ok() ? String.format(Locale.ROOT, "%.1f", s.latencyMs()) : "-", Integer.toString(s.tries),
          Integer.toString(s.status), s.txId.isEmpty() ? "-" : s.txId, j == null ? "-" : j.getString("status", "?")));
    }
    Files.write(file, lines);
  }

  private String ms(long nanos) {
    return String.format(Locale.ROOT, "%.1f", (nanos - beginNanos) / 1e6);
  }
}
