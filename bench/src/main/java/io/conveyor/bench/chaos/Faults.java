package io.conveyor.bench.chaos;

import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Injects one scenario's fault into a running rig and measures its recovery, bounded. Times are measured
 * from the kill for kill -9, and from the end of the outage (SIGCONT, Redis answering, PostgreSQL or the
 * receiver back) for the others.
 */
final class Faults {
  /** What a fault did: the node it hit ("" for none), the work in flight then, the recovery time (NaN if not within bound). */
  record Outcome(String faultedNode, long inFlight, double recoverSeconds, double boundSeconds, String notes) {
  }

  static final long BOUND_MS = 120_000;
  private final Rig rig;
  private final Supplier<String> progress;
  private final List<String> notes = new ArrayList<>();

  Faults(Rig rig, Supplier<String> progress) {
    this.rig = rig;
    this.progress = progress;
  }

  Outcome inject(Scenario s) throws Exception {
    return switch (s) {
      case KILL9_WORKER -> killWorker();
      case KILL9_REAPER -> killLeader("reaper");
      case KILL9_ARCHIVE -> killLeader("toArchive");
      case KILL9_WEBHOOK -> killLeader("webhook");
      case SIGSTOP15, SIGSTOP30 -> pause(s.outageSeconds);
      case REDIS_RESTART -> redisRestart(false, 0);
      case REDIS_EMPTY -> redisRestart(true, 0);
      case REDIS_DOWN30 -> redisRestart(false, s.outageSeconds);
      case REDIS_FULL30 -> redisFull(s.outageSeconds);
      case ARCHIVE_DB_DOWN45 -> archiveDown(s.outageSeconds);
      case WEBHOOK_RECEIVER_DOWN -> receiverDown(s.outageSeconds);
      case POISON_ROW -> poisonRows();
      case RUNAWAY_CYCLE -> runaway();
      case REDIS_CLUSTER_MASTER_KILL, REDIS_CLUSTER_MASTER_PAUSE ->
          throw new IllegalStateException(s.label + " runs on a Redis Cluster of its own (ClusterRun)");
    };
  }

  /** kill -9 of a node that leads nothing (or, if every node leads something, of one that is not the reaper). */
  private Outcome killWorker() throws Exception {
    List<String> leaders = List.of(nonNull(rig.leader("reaper")), nonNull(rig.leader("toArchive")),
        nonNull(rig.leader("webhook")));
    NodeProc victim = rig.nodes.stream().filter(n -> !leaders.contains(n.nodeId())).findFirst()
        .orElse(rig.nodes.stream().filter(n -> !n.nodeId().equals(leaders.get(0))).findFirst().orElseThrow());
    note("killed " + victim.name + " (leaders before: " + rig.leaders() + ")");
    return kill(victim, null);
  }

  /** kill -9 of the node holding the role's lease; the role resumes when another node holds it and its work moves. */
  private Outcome killLeader(String role) throws Exception {
    String id = until("a " + role + " leader", 60_000, () -> !nonNull(rig.leader(role)).isEmpty()) ? rig.leader(role)
        : null;
    if (id == null || rig.byId(id) == null) {
      throw new IllegalStateException("no " + role + " leader among the nodes (lease holds " + id + ")");
    }
    NodeProc victim = rig.byId(id);
    note("killed " + victim.name + " (leaders before: " + rig.leaders() + ")");
    return kill(victim, role);
  }

  /**
   * Kills the node and waits until its in-flight work has moved on and, for a leader, until another node
   * holds the lease and the role's work progresses (archive rows grow, webhooks arrive, or the reaper has
   * moved the dead node's work).
   */
  private Outcome kill(NodeProc victim, String role) throws Exception {
    until(victim.name + " to have work in flight", 10_000, () -> !rig.inflight(victim.nodeId()).isEmpty());
    List<String> ids = rig.inflight(victim.nodeId());
    victim.kill();
    long t0 = System.nanoTime();
    faultAt = t0;
    BooleanSupplier workMoved = () -> {
      List<String> left = rig.notMovedOn(ids, victim.nodeId());
      return left != null && left.isEmpty();
    };
    if (role == null) {
      double moved = secondsUntil("the dead node's " + ids.size() + " in-flight transactions to move on", t0,
          workMoved);
      note("its work moved on in " + fmt(moved) + " s");
      return new Outcome(victim.nodeId(), ids.size(), moved, BOUND_MS / 1000.0, String.join("; ", notes));
    }
    // the role and the dead node's work are watched together: a role resumes on its lease, the work on the
    // dead node's heartbeat expiry, and neither waits for the other
    double[] at = secondsUntilEach(t0, new String[] {"the dead node's " + ids.size()
        + " in-flight transactions to move on", "the " + role + " role to resume on another node"}, workMoved,
        new RoleResumed(role, victim.nodeId()));
    double moved = at[0];
    double resumed = at[1];
    note("its work moved on in " + fmt(moved) + " s");
    if (role.equals("reaper")) {
      resumed = Double.isNaN(resumed) || Double.isNaN(moved) ? Double.NaN : Math.max(resumed, moved);
    }
    String holder = nonNull(rig.leader(role));
    note(role + " lease now " + (rig.byId(holder) == null ? holder : rig.byId(holder).name));
    return new Outcome(victim.nodeId(), ids.size(), resumed, BOUND_MS / 1000.0, String.join("; ", notes));
  }

  /** A new holder of the role's lease, then a sign of its work: more archived rows, or more webhooks. */
  private final class RoleResumed implements BooleanSupplier {
    private final String role;
    private final String dead;
    private long mark = -1;

    RoleResumed(String role, String dead) {
      this.role = role;
      this.dead = dead;
    }

    @Override
    public boolean getAsBoolean() {
      String h = nonNull(rig.leader(role));
      if (h.isEmpty() || h.equals(dead)) {
        return false;
      }
      long work = switch (role) {
        case "toArchive" -> rig.pg.rows(rig.table);
        case "webhook" -> rig.driver.deliveries.size();
        default -> 0;
      };
      if (role.equals("reaper")) {
        return true;
      }
      if (mark < 0) {
        mark = work;
        return false;
      }
      return work > mark;
    }
  }

  /** SIGSTOP of the reaper's leader (the node whose stale view could do most harm), SIGCONT after the pause. */
  private Outcome pause(int seconds) throws Exception {
    until("a reaper leader", 60_000, () -> rig.byId(nonNull(rig.leader("reaper"))) != null);
    NodeProc victim = rig.byId(rig.leader("reaper"));
    long inFlight = rig.inflight(victim.nodeId()).size();
    note("paused " + victim.name + " (leaders before: " + rig.leaders() + ")");
    victim.pause();
    faultAt = System.nanoTime();
    hold("SIGSTOP of " + victim.name, seconds);
    note("leaders while paused: " + rig.leaders());
    victim.resume();
    long t1 = System.nanoTime();
    int want = Rig.NODES + 1;
    double[] t = secondsUntilEach(t1, new String[] {"one cluster view (" + want + " members in every view)",
        victim.name + " answering /health/ready"}, () -> rig.driver.members() == want
        && rig.nodes.stream().allMatch(n -> n.members() == want), () -> rig.driver.call(victim.httpPort,
        HttpMethod.GET, "/health/ready", null, 2000).await().status() == 200);
    double view = t[0];
    note("views after: driver " + rig.driver.members() + ", nodes " + rig.nodes.stream()
        .map(n -> Integer.toString(n.members())).toList());
    note("paused node ready after " + fmt(t[1]) + " s; leaders after: " + rig.leaders());
    // what the node had in flight when it was taken over (the snapshot above is taken a moment before the
    // pause, and the node may dequeue meanwhile): the reaper's own count, from its node-dead event
    long takenOver = rig.takenOver(victim.nodeId());
    if (takenOver >= 0) {
      note("in flight at takeover " + takenOver + " (at the pause " + inFlight + ")");
      inFlight = takenOver;
    }
    return new Outcome(victim.nodeId(), inFlight, view, BOUND_MS / 1000.0, String.join("; ", notes));
  }

  /**
   * Redis crashes (kill -9) and comes back at once, optionally with its data deleted, or is shut down for
   * a while. Recovery: every node ready after Redis answers; with empty data, a start of the pipeline.
   */
  private Outcome redisRestart(boolean empty, int downSeconds) throws Exception {
    long inFlight = rig.processing();
    note("redis clients per node before " + rig.clientsPerNode());
    if (downSeconds > 0) {
      rig.redis.shutdown();
      hold("Redis down", downSeconds);
    } else {
      rig.redis.kill();
    }
    if (empty) {
      rig.redis.wipe();
    }
    rig.redis.start();
    long t1 = System.nanoTime();
    double ready = secondsUntil("every node's /health/ready", t1, rig::allReady);
    note("all nodes ready " + fmt(ready) + " s after Redis answered");
    double recover = ready;
    if (empty) {
      recover = secondsUntil("a start of " + Rig.PIPELINE + " to succeed", t1, this::probeStart);
      note("a start succeeded " + fmt(recover) + " s after Redis answered");
    }
    Procs.sleep(5000);
    note("clients after (+5 s) " + rig.clientsPerNode());
    return new Outcome("", inFlight, recover, BOUND_MS / 1000.0, String.join("; ", notes));
  }

  /**
   * Redis full for the outage: maxmemory (noeviction) set to 1.05 times what it holds, so every node's memory guard
   * judges it above the high-water mark and refuses starts (503 redis-memory; the load retries them); then no
   * limit again. Recover: a start is accepted again (from the limit's removal). The notes count the refusals.
   */
  private Outcome redisFull(int seconds) throws Exception {
    long inFlight = rig.processing();
    long used = usedMemory();
    rig.redis.cli("CONFIG", "SET", "maxmemory-policy", "noeviction");
    rig.redis.cli("CONFIG", "SET", "maxmemory", Long.toString(used + used / 20));
    long t0 = System.nanoTime();
    note("maxmemory " + (used + used / 20) + " bytes (used " + used + ")");
    double full = secondsUntil("every node to say Redis is full", t0, () -> rig.live().stream()
        .allMatch(n -> rig.driver.call(n.httpPort, HttpMethod.GET, "/health/ready", null, 2000).await().body()
            .contains("\"redis\":\"full\"")));
    note("every node said full " + fmt(full) + " s after the limit");
    hold("Redis full", seconds);
    note("used at the end " + usedMemory() + " bytes; errorstats " + rig.redis.cli("INFO", "errorstats")
        .replaceAll("\\s+", " ").trim() + "; refused by Redis " + rejected());
    rig.redis.cli("CONFIG", "SET", "maxmemory", "0");
    long t1 = System.nanoTime();
    double recover = secondsUntil("a start of " + Rig.PIPELINE + " to succeed", t1, this::probeStart);
    note("a start succeeded " + fmt(recover) + " s after the limit went");
    return new Outcome("", inFlight, recover, BOUND_MS / 1000.0, String.join("; ", notes));
  }

  /** The commands Redis refused (INFO commandstats, rejected_calls above 0; an OOM is one), e.g. evalsha=12. */
  private String rejected() {
    String stats = rig.redis.cli("INFO", "commandstats");
    List<String> out = new ArrayList<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("cmdstat_([a-z|]+):.*?rejected_calls=(\\d+)")
        .matcher(stats == null ? "" : stats);
    while (m.find()) {
      if (!"0".equals(m.group(2))) {
        out.add(m.group(1) + "=" + m.group(2));
      }
    }
    return out.isEmpty() ? "none" : String.join(" ", out);
  }

  private long usedMemory() {
    String info = rig.redis.cli("INFO", "memory");
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("used_memory:(\\d+)").matcher(info == null ? "" : info);
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private int probes;

  /** One start on one node in turn, without a webhook; true when it was accepted. */
  private boolean probeStart() {
    List<NodeProc> live = rig.live();
    NodeProc n = live.get(probes++ % live.size());
    return rig.driver.call(n.httpPort, HttpMethod.POST, "/api/v1/transactions", new JsonObject()
        .put("type", Rig.PIPELINE).put("externalId", "probe-" + probes), 2000).await().ok();
  }

  /** PostgreSQL stopped for the outage; recovery: everything waiting to be archived at its restart is archived. */
  private Outcome archiveDown(int seconds) throws Exception {
    long inFlight = rig.processing();
    long rowsBefore = rig.pg.rows(rig.table);
    rig.pg.stop();
    hold("archive database down", seconds);
    List<String> waiting = rig.archiveWaiting();
    long backlog = waiting.size();
    rig.pg.start();
    long t1 = System.nanoTime();
    double drained = secondsUntil("the " + backlog + " transactions waiting at the restart to be archived", t1,
        () -> {
          waiting.retainAll(rig.stillWaiting(waiting));
          return waiting.isEmpty();
        });
    note("rows before " + rowsBefore + ", toArchiveZ at restart " + backlog + ", rows after "
        + rig.pg.rows(rig.table) + "; archive lease " + nonNull(rig.leader("toArchive")));
    return new Outcome("", inFlight, drained, BOUND_MS / 1000.0, String.join("; ", notes));
  }

  /** The webhook receiver's port closed for the outage; recovery: every transaction acknowledged by then has its webhook. */
  private Outcome receiverDown(int seconds) throws Exception {
    long inFlight = rig.redis.integer("ZCARD", rig.prefix + "webhooksZ");
    rig.driver.stopReceiver();
    hold("webhook receiver down", seconds);
    List<String> due = new ArrayList<>(loadTxIds.get());
    rig.driver.startReceiver();
    long t1 = System.nanoTime();
    double delivered = secondsUntil("webhooks of the " + due.size() + " transactions started before", t1, () -> {
      due.removeIf(rig.driver.deliveries::containsKey);
      return due.isEmpty();
    });
    note("webhooks.pause set to " + Scenario.WEBHOOK_PAUSE + "; webhooksZ at outage " + inFlight
        + "; not delivered " + due.size());
    return new Outcome("", inFlight, delivered, BOUND_MS / 1000.0, String.join("; ", notes));
  }

  /** How many transactions poison-row starts that the archive database then refuses. */
  static final int POISON = 5;

  /**
   * The archive table refuses some rows (a CHECK on external_id, as a constraint added in production might),
   * then POISON transactions with such an externalId start among the load. Recovery: the poison ones are
   * quarantined and everything that was waiting to be archived when they became due is archived.
   */
  private Outcome poisonRows() throws Exception {
    long inFlight = rig.processing();
    if (rig.pg.sql("ALTER TABLE " + rig.table + " ADD CONSTRAINT " + rig.table + "_no_poison CHECK (external_id IS "
        + "NULL OR external_id NOT LIKE 'toxic-%')") == null) {
      throw new IllegalStateException("could not add the CHECK constraint to " + rig.table);
    }
    List<String> poison = new ArrayList<>();
    // the load's own externalIds begin with the scenario's name: the refused ones must not
    for (int i = 0, tries = 0; poison.size() < POISON && tries < 3 * POISON; tries++) {
      NodeProc n = rig.live().get(tries % rig.live().size());
      Driver.Reply r = rig.driver.call(n.httpPort, HttpMethod.POST, "/api/v1/transactions", new JsonObject()
          .put("type", Rig.PIPELINE).put("externalId", "toxic-" + i), 5000).await();
      if (r.ok() || r.status() == 409) {
        poison.add(r.ok() ? new JsonObject(r.body()).getString("txId") : null);
        i++;
      }
    }
    poison.removeIf(java.util.Objects::isNull);
    long t0 = System.nanoTime();
    until("the poison transactions due for archiving", BOUND_MS, () -> rig.stillWaiting(poison).size() == poison.size());
    List<String> waiting = rig.archiveWaiting();
    long backlog = waiting.size();
    String quarantineH = rig.prefix + "quarantineH";
    double[] at = secondsUntilEach(t0, new String[] {"the " + backlog + " transactions waiting then to be archived",
        "the " + poison.size() + " poison transactions quarantined"}, () -> {
          waiting.retainAll(rig.stillWaiting(waiting));
          waiting.removeAll(poison);
          return waiting.isEmpty();
        }, () -> rig.redis.integer("HLEN", quarantineH) >= poison.size());
    note(poison.size() + " poison started; toArchiveZ when due " + backlog + ", archived (all but the poison) in "
        + fmt(at[0]) + " s, poison quarantined in " + fmt(at[1]) + " s; quarantineH " + rig.redis.integer("HLEN",
        quarantineH) + ", rows " + rig.pg.rows(rig.table));
    return new Outcome("", inFlight, Double.isNaN(at[0]) || Double.isNaN(at[1]) ? Double.NaN : Math.max(at[0], at[1]),
        BOUND_MS / 1000.0, String.join("; ", notes));
  }

  /** runaway-cycle's windows of the load, before and during the runaway (null for the other scenarios). */
  Runaway.Window loadWindow;

  private Outcome runaway() throws Exception {
    Runaway r = new Runaway(rig, loadPending);
    try {
      return r.run();
    } finally {
      loadWindow = r.window;
    }
  }

  /** How many of the load's starts await their acknowledgement now (set by the run). */
  Supplier<Integer> loadPending = () -> 0;

  /** The txIds the load has had acknowledged so far (set by the run). */
  Supplier<List<String>> loadTxIds = List::of;
  /** When the fault hit a node (kill or SIGSTOP), for the duplicates' times; the run's start otherwise. */
  long faultAt = System.nanoTime();

  private void note(String s) {
    notes.add(s);
    System.err.println("chaos:   " + s);
  }

  /** Keeps the fault on for the given seconds, with a progress line every 5 s. */
  private void hold(String what, int seconds) {
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    while (System.nanoTime() < end) {
      Procs.sleep(Math.min(5000, Math.max(1, (end - System.nanoTime()) / 1_000_000)));
      if (System.nanoTime() >= end) {
        break;
      }
      System.err.println("chaos:   " + what + ", " + fmt((seconds * 1e9 - (end - System.nanoTime())) / 1e9) + " s; "
          + progress.get());
    }
  }

  /** Seconds from t0 until the condition holds, polled every 200 ms; NaN past the bound. */
  private double secondsUntil(String what, long t0, BooleanSupplier condition) {
    long last = System.nanoTime();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - t0 > BOUND_MS * 1_000_000) {
        System.err.println("chaos:   gave up waiting for " + what + " after " + BOUND_MS / 1000 + " s");
        return Double.NaN;
      }
      if (System.nanoTime() - last > 5_000_000_000L) {
        last = System.nanoTime();
        System.err.println("chaos:   waiting for " + what + ", " + fmt((last - t0) / 1e9) + " s; " + progress.get());
      }
      Procs.sleep(200);
    }
    return (System.nanoTime() - t0) / 1e9;
  }

  /** Seconds from t0 until each condition first held (polled together every 200 ms); NaN past the bound. */
  private double[] secondsUntilEach(long t0, String[] what, BooleanSupplier... conditions) {
    double[] at = new double[conditions.length];
    java.util.Arrays.fill(at, Double.NaN);
    long last = System.nanoTime();
    while (java.util.Arrays.stream(at).anyMatch(Double::isNaN) && System.nanoTime() - t0 <= BOUND_MS * 1_000_000) {
      for (int i = 0; i < conditions.length; i++) {
        if (Double.isNaN(at[i]) && conditions[i].getAsBoolean()) {
          at[i] = (System.nanoTime() - t0) / 1e9;
        }
      }
      if (System.nanoTime() - last > 5_000_000_000L) {
        last = System.nanoTime();
        for (int i = 0; i < what.length; i++) {
          if (Double.isNaN(at[i])) {
            System.err.println("chaos:   waiting for " + what[i] + ", " + fmt((last - t0) / 1e9) + " s; "
                + progress.get());
          }
        }
      }
      Procs.sleep(200);
    }
    return at;
  }

  private static boolean until(String what, long boundMs, BooleanSupplier condition) {
    long end = System.currentTimeMillis() + boundMs;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > end) {
        System.err.println("chaos:   no " + what + " within " + boundMs / 1000 + " s");
        return false;
      }
      Procs.sleep(100);
    }
    return true;
  }

  private static String nonNull(String s) {
    return s == null ? "" : s;
  }

  static String fmt(double seconds) {
    return Double.isNaN(seconds) ? "never" : String.format(Locale.ROOT, "%.1f", seconds);
  }
}
