package io.conveyor.redis;

/** Every Redis key name, built from the configured prefix. docs/redis-keys.md describes each. */
public final class Keys {
  private final String prefix;

  public Keys(String prefix) {
    this.prefix = prefix;
  }

  public String prefix() {
    return prefix;
  }

  public String stateH(String txId) {
    return prefix + "stateH:" + txId;
  }

  public String pipelineH(String pipeline) {
    return prefix + "pipelineH:" + pipeline;
  }

  public String pipelinesS() {
    return prefix + "pipelinesS";
  }

  public String pipelineVersionsH(String pipeline) {
    return prefix + "pipelineVersionsH:" + pipeline;
  }

  public String qInL(String group) {
    return prefix + "qInL:" + group;
  }

  public String qOutL(String group) {
    return prefix + "qOutL:" + group;
  }

  public String qAdminL(String group) {
    return prefix + "qAdminL:" + group;
  }

  public String qRingL(String group) {
    return prefix + "qRingL:" + group;
  }

  public String processingZ() {
    return prefix + "processingZ";
  }

  public String inflightZ(String nodeId) {
    return prefix + "inflightZ:" + nodeId;
  }

  public String rateH(String owner) {
    return prefix + "rateH:" + owner;
  }

  public String sleepingZ() {
    return prefix + "sleepingZ";
  }

  /** A webhook event and its delivery state; the completion event of a transaction has the txId as its id. */
  public String webhookH(String webhookId) {
    return prefix + "webhookH:" + webhookId;
  }

  public String webhooksZ() {
    return prefix + "webhooksZ";
  }

  public String toArchiveZ() {
    return prefix + "toArchiveZ";
  }

  public String externalId(String owner, String externalId) {
    return prefix + "externalId:" + owner + ":" + externalId;
  }

  public String notifyChannel() {
    return prefix + "notify";
  }

  public String heartbeat(String nodeId) {
    return heartbeatPrefix() + nodeId + HEARTBEAT_SUFFIX;
  }

  /** What comes before the nodeId in a heartbeat key (reap.lua builds the keys of the nodes it finds). */
  public String heartbeatPrefix() {
    return prefix + "node:";
  }

  /** What comes after the nodeId in a heartbeat key. */
  public static final String HEARTBEAT_SUFFIX = ":heartbeat";

  public String webhookCounter(String urlHash) {
    return prefix + "webhookCounter:" + urlHash;
  }

  public String webhookPause(String urlHash) {
    return prefix + "webhookPause:" + urlHash;
  }

  /** The slot lengths of the three stats series, in ms (lua/lib/stats.lua has the same). */
  private static final long[] STATS_SLOTS = {5_000, 60_000, 600_000};

  /** A stats hash: series 1, 2 or 3 (5 s, 60 s, 600 s slots), for the slot starting at slotStart (ms). */
  public String statsH(int series, long slotStart) {
    return prefix + "stats" + series + "H:" + slotStart;
  }

  /** The stats1H, stats2H and stats3H keys of the slots that hold the given time. */
  public java.util.List<String> statsKeys(long now) {
    java.util.List<String> out = new java.util.ArrayList<>(3);
    for (int i = 0; i < STATS_SLOTS.length; i++) {
      out.add(statsH(i + 1, now - Math.floorMod(now, STATS_SLOTS[i])));
    }
    return out;
  }

  public String nodesZ() {
    return prefix + "nodesZ";
  }

  public String exceptionZ() {
    return prefix + "exceptionZ";
  }

  public String eventsL() {
    return prefix + "eventsL";
  }

  /** The two lease keys of a leader-only role: reaperLock1, toArchiveLock1, webhookLock1 (and …Lock2). */
  public String lock1(LeaderRole role) {
    return prefix + role.keyName + "Lock1";
  }

  public String lock2(LeaderRole role) {
    return prefix + role.keyName + "Lock2";
  }
}
