package io.conveyor.lease;

import org.slf4j.Logger;

/**
 * A leader role's failed rounds on Redis, logged as a streak: the first failure as a WARN naming the role and its
 * partition, the rest at DEBUG, and the end of the streak (how many failed) as an INFO. A Redis Cluster master's
 * failover fails every round of its partitions for seconds; logged one by one, the archive, webhook and reaper
 * loops wrote 5-10 WARN lines a second each, burying what else happened. Used on its role's context only.
 */
public final class RoundFailures {
  private final Logger log;
  private final String what;
  private int streak;

  /** what names the role's rounds in the log, with their partition (e.g. "archive (partition 2)"). */
  public RoundFailures(Logger log, String what) {
    this.log = log;
    this.what = what;
  }

  /** A round failed on Redis. */
  public void failed(Throwable e) {
    if (streak++ == 0) {
      log.warn("{}: a round failed on Redis ({}); retrying, logged again when rounds work", what, e.getMessage());
    } else {
      log.debug("{}: round {} of a streak failed: {}", what, streak, e.getMessage());
    }
  }

  /** A round worked: the end of a streak, if one was under way. */
  public void worked() {
    if (streak > 0) {
      log.info("{}: rounds work again after {} failed", what, streak);
      streak = 0;
    }
  }

  /** Failed rounds in a row so far (0: the last worked). */
  public int streak() {
    return streak;
  }
}
