package io.conveyor.bench.chaos;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * One run of one scenario: a fresh rig under a steady load, a warm-up, the fault and its recovery, the
 * rest of the load, then the count of what became of every transaction started.
 */
final class ChaosRun {
  private static final int WARMUP_SECONDS = 10;
  private final ChaosOptions options;
  private final RedisServer redis;
  private final PgServer pg;

  ChaosRun(ChaosOptions options, RedisServer redis, PgServer pg) {
    this.options = options;
    this.redis = redis;
    this.pg = pg;
  }

  Row run(Scenario scenario, int run, Path dir) throws Exception {
    if (scenario.redisCluster()) {
      return new ClusterRun(options, redis, pg).run(scenario, run, dir);
    }
    System.err.println("chaos: " + scenario.label + " run " + run + ": starting 3 nodes (logs in " + dir + ")");
    Rig rig = Rig.start(redis, pg, dir, options.stepMillis(), scenario.env(), options.notIdempotent(),
        options.tls());
    try {
      SteadyLoad load = new SteadyLoad(rig, options.rate(), scenario.label + "-" + run + "-" + rig.table);
      long loadSeconds = Math.max(options.durationSeconds(), WARMUP_SECONDS + scenario.outageSeconds + 20);
      long begin = System.nanoTime();
      load.start();
      Faults faults = new Faults(rig, load.progress());
      faults.loadTxIds = () -> load.acked.values().stream().filter(id -> !id.isEmpty()).toList();
      faults.loadPending = load.pending::size;
      Procs.sleep(WARMUP_SECONDS * 1000L);
      System.err.println("chaos:   warmed up: " + load.progress().get() + "; leaders " + rig.leaders());
      Faults.Outcome outcome = faults.inject(scenario);
      long left = loadSeconds * 1000 - (System.nanoTime() - begin) / 1_000_000;
      if (left > 0) {
        System.err.println("chaos:   load goes on for " + left / 1000 + " s more");
        Procs.sleep(left);
      }
      load.stop(60_000);
      long end = System.currentTimeMillis() + 65_000;
      while (!load.pending.isEmpty() && System.currentTimeMillis() < end) {
        Procs.sleep(500);
      }
      System.err.println("chaos:   load stopped: " + load.progress().get());
      Tally tally = Tally.of(rig, load, 120_000);
      Executions ex = rig.driver.executions;
      List<String> healthyReaped = rig.reaped().stream().filter(id -> !id.equals(outcome.faultedNode())).toList();
      List<String> dups = ex.duplicateLines(outcome.faultedNode(), faults.faultAt);
      Files.write(dir.resolve("duplicates.txt"), dups);
      String notes = outcome.notes() + "; statuses " + tally.statuses + (tally.unacked > 0 ? "; never acknowledged "
          + tally.unacked : "") + "; duplicated tx " + ex.duplicatedTransactions() + " " + ex.duplicateCauses(outcome.faultedNode())
          + (healthyReaped.isEmpty() ? "" : "; healthy nodes reaped " + healthyReaped) + "; webhooks missing "
          + tally.webhooksMissing + ", repeated " + tally.webhookDuplicates + "; start retries " + load.retries.get()
          + " " + load.failuresByStatus + (load.noAnswerBy.isEmpty() ? "" : ", no answer " + load.noAnswerBy)
          + (load.hung.get() > 0 ? "; driver calls hung " + load.hung.get() : "")
          + "; executions de-duplicated by key " + ex.deduplicated()
          + (options.notIdempotent() ? "; steps not idempotent" : "") + (faults.loadWindow == null ? "" : "; "
          + Runaway.loadFigures(faults.loadWindow, tally.byExternalId));
      return new Row(scenario.label, run, tally.started, tally.lost(), tally.failed, tally.internalError,
          ex.duplicates(), ex.effectsDuplicated(), tally.maybeRan, outcome.inFlight(), healthyReaped.size(), ex.healthyRequeued(outcome.faultedNode()), outcome.recoverSeconds(),
          outcome.boundSeconds(), notes);
    } finally {
      rig.close();
    }
  }
}
