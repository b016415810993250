package io.conveyor.node;

import io.conveyor.config.Config;
import io.conveyor.model.PipelineSource;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.redis.StuckStore;
import io.vertx.core.Future;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The reaper leader's look for stuck work in its partition (see stuck.lua), one bounded call a stats slot. Runs are
 * judged here, where the pipelines' step timeouts are known: a processingZ entry older than grace is read with its
 * step and checkpoint, and passed on when its step has run longer than its timeout plus grace. The three cursors
 * (processingZ, the walk over liveZ, the second look over the list) are this leader's own: a new leader starts
 * from the beginning, which costs a batch, not a miss.
 */
public final class StuckWatch {
  private final StuckStore store;
  private final Settings settings;
  private final PipelineSource pipelines;
  private final Clock clock;
  private long runs;
  private long walk;
  private long look;

  /** What the reaper needs to look for stuck work: the thresholds, the default step timeout, the pipelines. */
  public record Settings(StuckStore.Settings thresholds, Duration stepTimeout, PipelineCatalog catalog) {
    /** From the reaper's config, the default step timeout (transactions.stepTimeout) and the node's pipelines. */
    public static Settings of(Config.Reaper reaper, Duration stepTimeout, PipelineCatalog catalog) {
      return new Settings(new StuckStore.Settings(reaper.stuckGrace(), reaper.stuckHeldAfter(), reaper.stuckBatch()),
          stepTimeout, catalog);
    }
  }

  StuckWatch(StuckStore store, Settings settings, PipelineSource pipelines, Clock clock) {
    this.clock = clock;
    this.store = store;
    this.settings = settings;
    this.pipelines = pipelines;
  }

  /** One look at partition p, with the groups the live nodes serve (their held-back work). */
  Future<StuckStore.Round> round(int p, Collection<String> groups) {
    StuckStore.Settings t = settings.thresholds();
    return store.overdueRuns(p, runs, t.batch(), t.grace()).compose(candidates -> {
      runs = candidates.size() < t.batch() ? 0 : runs + candidates.size();
      List<Future<StuckStore.Running>> judged = new ArrayList<>();
      long now = clock.millis();
      for (StuckStore.Candidate c : candidates) {
        if (c.type() != null) {
          judged.add(timeout(c).map(ms -> now - c.stepBegan() > ms + t.grace().toMillis()
              ? new StuckStore.Running(c.txId(), c.attempt(), c.step(), c.stepBegan(), ms) : null));
        }
      }
      return Future.join(judged).transform(ar -> {
        List<StuckStore.Running> overdue = new ArrayList<>();
        judged.stream().filter(f -> f.succeeded() && f.result() != null).forEach(f -> overdue.add(f.result()));
        return store.check(p, t, groups, overdue, walk, look);
      });
    }).onSuccess(round -> {
      walk = round.walk();
      look = round.look();
    });
  }

  /** The timeout (ms) of the candidate's step, from its pipeline version (a version Redis lacks: the default). */
  private Future<Long> timeout(StuckStore.Candidate c) {
    return settings.catalog().version(pipelines, c.type(), c.version())
        .map(p -> c.step() < p.pipeline().steps().size()
            ? p.pipeline().stepTimeout(c.step(), settings.stepTimeout()) : settings.stepTimeout())
        .otherwise(settings.stepTimeout()).map(Duration::toMillis);
  }

}
