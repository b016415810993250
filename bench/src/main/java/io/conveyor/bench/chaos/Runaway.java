package io.conveyor.bench.chaos;

import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * runaway-cycle: while the steady load of the ordinary tenant (chaos) runs, a second tenant (runaway) uploads two
 * pipelines whose child steps form a cycle (cycle-a → child cycle-b → child cycle-a, a 200 ms delay before each
 * hop), starts cycle-a ROOTS times a second apart, and cancels the last root while its chain still grows. Each
 * root must end failed with depth-exceeded (the cancelled one cancelled), no root's tree may ever hold
 * limits.maxDepth × 2 transactions, and Redis must hold nothing of the cycle once it is archived. Recovery: from
 * the first start until Redis holds none of it. The window of the load before and during the runaway is kept,
 * so the run can set the load's throughput and latency in each side by side (window).
 */
final class Runaway {
  static final int ROOTS = 5;
  /** limits.maxDepth's default, which the rig keeps: a root's tree must stay under twice it. */
  static final int MAX_DEPTH = 32;
  private static final String A = "cycle-a";
  private static final String B = "cycle-b";
  /** The load's "before" window: the last seconds before the first start of the cycle. */
  static final long BEFORE_MS = 10_000;

  /** The load's windows (epoch ms): before = [from, start), during = [start, end). */
  record Window(long from, long start, long end) {
  }

  private final Rig rig;
  private final Supplier<Integer> loadPending;
  private final List<String> notes = new ArrayList<>();
  private final Map<Integer, Integer> startFailures = new java.util.TreeMap<>();
  Window window;

  Runaway(Rig rig, Supplier<Integer> loadPending) {
    this.rig = rig;
    this.loadPending = loadPending;
  }

  Faults.Outcome run() throws Exception {
    // the "before" window must see the load keep up: on a loaded machine the nodes' first seconds (the JIT's) leave
    // a backlog of starts awaiting their answer
    long steadySince = System.currentTimeMillis();
    long waitUntil = steadySince + 90_000;
    while (System.currentTimeMillis() < waitUntil && System.currentTimeMillis() - steadySince < BEFORE_MS) {
      if (loadPending.get() > 20) {
        steadySince = System.currentTimeMillis();
      }
      Procs.sleep(250);
    }
    note(System.currentTimeMillis() - steadySince >= BEFORE_MS ? "the load kept up (≤ 20 starts unanswered) for "
        + BEFORE_MS / 1000 + " s before the cycle" : "the load did not keep up for " + BEFORE_MS / 1000
        + " s within 90 s (the machine); the cycle starts anyway");
    long inFlight = rig.processing();
    String warnings = upload(A, B) + " / " + upload(B, A);
    note("upload warnings: " + warnings);
    long t0 = System.currentTimeMillis();
    long n0 = System.nanoTime();
    List<String> roots = new ArrayList<>();
    for (int i = 0; i < ROOTS; i++) {
      roots.add(startRoot("cycle-" + rig.table + "-" + i));
      if (i < ROOTS - 1) {
        Procs.sleep(1000);
      }
    }
    if (!startFailures.isEmpty()) {
      note("starts of " + A + " retried by HTTP status (0 = no answer within 5 s) " + startFailures);
    }
    String cancelled = roots.get(ROOTS - 1);
    Procs.sleep(3000);
    NodeProc n = rig.live().get(0);
    Driver.Reply[] answer = {null};
    until(() -> {
      answer[0] = rig.driver.call(n.httpPort, HttpMethod.POST, "/api/v1/transactions/" + cancelled + "/cancel", null,
          10_000, rig.otherKey).await();
      return answer[0].status() != 0;
    }, "an answer to the cancel");
    Driver.Reply cancel = answer[0];
    note("cancel of the last root 3 s after its start answered " + cancel.status() + (cancel.json()
        .containsKey("cancelPending") ? " (cancelPending " + cancel.json().getValue("cancelPending") + ")" : ""));
    long[] peak = {0};
    int[] reads = {0, 0}; // Redis read, not read within its bound
    Map<String, JsonObject> ends = new LinkedHashMap<>();
    boolean ended = until(() -> {
      long live = liveOfOther();
      peak[0] = Math.max(peak[0], live);
      reads[live < 0 ? 1 : 0]++;
      for (String r : roots) {
        if (!ends.containsKey(r)) {
          Driver.Reply s = rig.driver.call(n.httpPort, HttpMethod.GET, "/api/v1/transactions/" + r, null, 5000,
              rig.otherKey).await();
          String status = s.ok() ? s.json().getString("status", "") : "";
          if (!status.isEmpty() && !status.equals("running")) {
            ends.put(r, s.json());
          }
        }
      }
      return ends.size() == roots.size();
    }, "the " + ROOTS + " roots to end");
    long t1 = System.currentTimeMillis();
    window = new Window(t0 - BEFORE_MS, t0, t1);
    double endedIn = (System.nanoTime() - n0) / 1e9;
    boolean clean = ended && until(() -> liveOfOther() == 0 && cancelWalks() == 0, "Redis to hold none of the cycle");
    double cleanIn = (System.nanoTime() - n0) / 1e9;
    note(describe(roots, ends, cancelled));
    note(leftOf(archived()));
    note("transactions per root, from the archive: " + perRoot(roots) + " (limit " + 2 * MAX_DEPTH + ")");
    note("runaway live at most " + peak[0] + " (in " + reads[0] + " reads of Redis, " + reads[1]
        + " more not answered in time); roots ended " + Faults.fmt(ended ? endedIn : Double.NaN)
        + " s after the first start; Redis held none of the cycle (stateH, cancel walks) after "
        + Faults.fmt(clean ? cleanIn : Double.NaN) + " s");
    return new Faults.Outcome("", inFlight, clean ? cleanIn : Double.NaN, Faults.BOUND_MS / 1000.0,
        String.join("; ", notes));
  }

  /** Uploads a pipeline that waits 200 ms, then starts the other as a child; answers its warning. */
  private String upload(String name, String child) {
    JsonObject p = new JsonObject().put("name", name).put("nodeGroup", "master").put("transactionType", true)
        .put("steps", new io.vertx.core.json.JsonArray()
            .add(new JsonObject().put("type", "util/delay").put("params", new JsonObject().put("duration", "200ms")))
            .add(new JsonObject().put("type", "util/child-pipeline").put("params",
                new JsonObject().put("pipeline", child))));
    Driver.Reply[] reply = {null};
    int[] tries = {0};
    // an answer, or none within the bound: on a loaded machine a node may not answer in time (status 0)
    until(() -> {
      List<NodeProc> live = rig.live();
      reply[0] = rig.driver.call(live.get(tries[0]++ % live.size()).httpPort, HttpMethod.PUT, "/api/v1/pipelines/"
          + name, p, 10_000, rig.otherKey).await();
      return reply[0].status() != 0 && reply[0].status() < 500;
    }, "the upload of " + name);
    Driver.Reply r = reply[0];
    if (!r.ok()) {
      throw new IllegalStateException("upload of " + name + " answered " + r.status() + ": " + r.body());
    }
    return name + ": " + r.json().getString("warning", "(none)");
  }

  /** Starts cycle-a as the runaway tenant, retrying (bounded) until a node knows the pipeline. */
  private String startRoot(String externalId) {
    String[] txId = {null};
    int[] tries = {0};
    boolean ok = until(() -> {
      List<NodeProc> live = rig.live();
      Driver.Reply r = rig.driver.call(live.get(tries[0]++ % live.size()).httpPort, HttpMethod.POST,
          "/api/v1/transactions", new JsonObject().put("type", A).put("externalId", externalId), 5000,
          rig.otherKey).await();
      if (r.ok()) {
        txId[0] = r.json().getString("txId");
      } else {
        startFailures.merge(r.status(), 1, Integer::sum);
      }
      return txId[0] != null;
    }, "a start of " + A);
    if (!ok) {
      throw new IllegalStateException("no start of " + A + " was accepted");
    }
    return txId[0];
  }

  private String describe(List<String> roots, Map<String, JsonObject> ends, String cancelled) {
    List<String> out = new ArrayList<>();
    for (String r : roots) {
      JsonObject s = ends.get(r);
      String note = s == null ? "" : s.getString("note", "");
      String code = note.contains("depth-exceeded") ? " depth-exceeded" : note.isEmpty() ? "" : " (" + note + ")";
      out.add((r.equals(cancelled) ? "cancelled root " : "")
          + (s == null ? "not ended" : s.getString("status") + code));
    }
    return "roots: " + String.join(", ", out);
  }

  /** Per root: how many transactions its tree ever had in the archive, and their statuses. */
  private String perRoot(List<String> roots) {
    String rows = rig.pg.sql("SELECT coalesce(state->>'root', tx_id), count(*), string_agg(DISTINCT status, '+') FROM "
        + rig.table + " WHERE owner = '" + Rig.OTHER_OWNER + "' GROUP BY 1");
    if (rows == null) {
      return "(the archive did not answer)";
    }
    Map<String, String> byRoot = new LinkedHashMap<>();
    rows.lines().filter(l -> !l.isBlank()).forEach(l -> {
      String[] f = l.split("\\|");
      byRoot.put(f[0], f[1] + " " + f[2]);
    });
    List<String> out = new ArrayList<>();
    roots.forEach(r -> out.add(byRoot.getOrDefault(r, "none")));
    long strays = byRoot.keySet().stream().filter(k -> !roots.contains(k)).count();
    return String.join(", ", out) + (strays > 0 ? " (+" + strays + " trees of no root started here)" : "");
  }

  /** The runaway tenant's transactions Redis holds (its stateH keys), -1 when Redis did not answer. */
  private long liveOfOther() {
    String keys = rig.redis.cli("--scan", "--pattern", rig.prefix + "*stateH:*");
    if (keys == null) {
      return -1;
    }
    List<String> cmds = keys.lines().filter(l -> !l.isBlank()).map(k -> "HGET " + k + " owner").toList();
    if (cmds.isEmpty()) {
      return 0;
    }
    List<String> owners = rig.redis.pipe(cmds);
    return owners == null ? -1 : owners.stream().filter(Rig.OTHER_OWNER::equals).count();
  }

  /** The runaway tenant's transactions in the archive. */
  private List<String> archived() {
    String out = rig.pg.sql("SELECT tx_id FROM " + rig.table + " WHERE owner = '" + Rig.OTHER_OWNER + "'");
    return out == null ? List.of() : out.lines().filter(l -> !l.isBlank()).toList();
  }

  /** What Redis still holds of the archived ones: their stateH keys and liveZ entries. */
  private String leftOf(List<String> ids) {
    if (ids.isEmpty()) {
      return "the archive holds none of the cycle";
    }
    List<String> exists = rig.redis.pipe(ids.stream().map(id -> "EXISTS " + rig.prefix + "stateH:" + id).toList());
    long states = exists == null ? -1 : exists.stream().filter("1"::equals).count();
    long live = 0;
    String liveKeys = rig.redis.cli("--scan", "--pattern", rig.prefix + "*liveZ");
    for (String k : liveKeys == null ? List.<String>of() : liveKeys.lines().filter(l -> !l.isBlank()).toList()) {
      List<String> args = new ArrayList<>(List.of("ZMSCORE", k));
      args.addAll(ids);
      String scores = rig.redis.cli(args.toArray(String[]::new));
      live += scores == null ? 0 : scores.lines().filter(l -> !l.isBlank()).count();
    }
    return "the archive holds " + ids.size() + " of the cycle; Redis still has " + states + " of their stateH and "
        + live + " of their liveZ entries";
  }

  /** Entries on the cancel walks (cancelL of every partition). */
  private long cancelWalks() {
    String keys = rig.redis.cli("--scan", "--pattern", rig.prefix + "*cancelL*");
    if (keys == null) {
      return -1;
    }
    return keys.lines().filter(l -> !l.isBlank()).mapToLong(k -> rig.redis.integer("LLEN", k)).sum();
  }

  /** The load's throughput and latency before and during the runaway, from its final summaries. */
  static String loadFigures(Window w, Map<String, JsonObject> summaries) {
    if (w == null) {
      return "";
    }
    return "load before: " + figures(w.from(), w.start(), summaries) + "; during: " + figures(w.start(), w.end(),
        summaries);
  }

  private static String figures(long from, long to, Map<String, JsonObject> summaries) {
    List<Long> latencies = new ArrayList<>();
    long done = 0;
    for (JsonObject s : summaries.values()) {
      long created = millis(s.getString("created"));
      long completed = millis(s.getString("completed"));
      if (created >= from && created < to && completed > 0) {
        latencies.add(completed - created);
      }
      if (completed >= from && completed < to) {
        done++;
      }
    }
    long[] l = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
    double seconds = (to - from) / 1000.0;
    return String.format(Locale.ROOT, "%.1f s, %.1f completed/s, start→end p50 %d ms, p99 %d ms, max %d ms (%d)",
        seconds, done / seconds, rank(l, 0.50), rank(l, 0.99), l.length == 0 ? 0 : l[l.length - 1], l.length);
  }

  private static long rank(long[] sorted, double q) {
    return sorted.length == 0 ? 0 : sorted[Math.max(0, (int) Math.ceil(q * sorted.length) - 1)];
  }

  private static long millis(String iso) {
    try {
      return iso == null ? 0 : Instant.parse(iso).toEpochMilli();
    } catch (RuntimeException e) {
      return 0;
    }
  }

  private boolean until(BooleanSupplier condition, String what) {
    long end = System.currentTimeMillis() + Faults.BOUND_MS;
    long last = System.currentTimeMillis();
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > end) {
        System.err.println("chaos:   gave up waiting for " + what + " after " + Faults.BOUND_MS / 1000 + " s");
        return false;
      }
      if (System.currentTimeMillis() - last > 5000) {
        last = System.currentTimeMillis();
        System.err.println("chaos:   waiting for " + what);
      }
      Procs.sleep(250);
    }
    return true;
  }

  private void note(String s) {
    notes.add(s);
    System.err.println("chaos:   " + s);
  }
}
