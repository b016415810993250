package io.conveyor.redis;

import java.util.ArrayList;
import java.util.List;

/**
 * Every Redis key name, built from the configured prefix and the number of partitions (docs/redis-keys.md
 * describes each). With one partition every key is the prefix and its name, as it always was. With more,
 * a transaction's keys, and the queues and sets of its partition, carry the partition's hash tag
 * ({@code <prefix>{p3-17}:stateH:tx-…}), so every script runs in one slot and a Redis Cluster spreads the
 * partitions over its masters; the few cluster-wide keys (nodes, heartbeats, pipelines, rates) share the tag
 * {g}. A txId names its partition in its first four hex digits.
 */
public final class Keys {
  private final String prefix;
  private final Partitions parts;

  public Keys(String prefix) {
    this(prefix, 1);
  }

  public Keys(String prefix, int partitions) {
    this.prefix = prefix;
    this.parts = new Partitions(partitions);
  }

  public String prefix() {
    return prefix;
  }

  public int partitions() {
    return parts.count();
  }

  /** Every partition, 0 to P-1. */
  public List<Integer> all() {
    return parts.all();
  }

  /** The partition of a transaction, or of an id that starts with its txId (see Partitions.of). */
  public int partitionOf(String txId) {
    return parts.of(txId);
  }

  /** The partition a new transaction goes to (see Partitions.forStart). */
  public int partitionFor(String owner, String externalId) {
    return parts.forStart(owner, externalId);
  }

  /** A fresh txId in a partition. */
  public String newTxId(int partition) {
    return parts.newTxId(partition);
  }

  String in(int p, String name) {
    return prefix + parts.tag(p) + name;
  }

  String global(String name) {
    return prefix + parts.globalTag() + name;
  }

  // ---- a transaction's own keys: in its partition

  public String stateH(String txId) {
    return stateH(partitionOf(txId), txId);
  }

  /** stateH in partition p; with "" the prefix a script puts a txId after. */
  public String stateH(int p, String txId) {
    return in(p, "stateH:" + txId);
  }

  /** A webhook event and its delivery state; the completion event of a transaction has the txId as its id. */
  public String webhookH(String webhookId) {
    return webhookH(partitionOf(webhookId), webhookId);
  }

  public String webhookH(int p, String webhookId) {
    return in(p, "webhookH:" + webhookId);
  }

  public String externalId(String owner, String externalId) {
    return in(partitionFor(owner, externalId), "externalId:" + owner + ":" + externalId);
  }

  // ---- schedules, each in the partition its id hashes to

  /** The partition a schedule lives in. */
  public int partitionOfSchedule(String id) {
    return partitionFor("schedule", id);
  }

  /** A schedule: its definition, when it was published, and its runs (see schedule-*.lua). */
  public String scheduleH(String id) {
    return scheduleH(partitionOfSchedule(id), id);
  }

  /** The same in a given partition (with "" the prefix a script appends ids to). */
  public String scheduleH(int p, String id) {
    return in(p, "scheduleH:" + id);
  }

  /** The schedule ids of a partition. */
  public String schedulesS(int p) {
    return in(p, "schedulesS");
  }

  /** A partition's schedules that are not paused, scored by their next fire time (ms). */
  public String schedulesZ(int p) {
    return in(p, "schedulesZ");
  }

  /** A partition's fires in hand ("<id>@<fire ms>"), scored by when they were taken or last driven (ms). */
  public String schedulePurgatoryZ(int p) {
    return in(p, "schedulePurgatoryZ");
  }

  // ---- a partition's queues and sets

  /** A group's in-queue: a sorted set, lowest score first (lib/queue.lua: time queued less its head start). */
  public String qInZ(int p, String group) {
    return in(p, "qInZ:" + group);
  }

  /** A group's fair-share counts: owner → its starts admitted to qInZ, '*' → starts waiting (lib/queue.lua). */
  public String qFairH(int p, String group) {
    return in(p, "qFairH:" + group);
  }

  /** An owner's starts beyond its share of a group's in-queue, scored as qInZ is (lib/queue.lua). */
  public String qOwnerZ(int p, String group, String owner) {
    return qOwnerZPrefix(p) + group + ":" + owner;
  }

  /** The limits of a group with transactions held back (dequeue.lua): a pipeline, or '@' and an owner. */
  public String qHeldS(int p, String group) {
    return in(p, "qHeldS:" + group);
  }

  /** Transactions held back by a limit (see qHeldS) until tokens or a slot come, scored as in qInZ. */
  public String qHeldZ(int p, String group, String limit) {
    return in(p, "qHeldZ:" + group + ":" + limit);
  }

  /** A group's token buckets, one per rate limit: fields limit:t (tokens) and limit:at (ms; lib/bucket.lua). */
  public String qRateH(int p, String group) {
    return in(p, "qRateH:" + group);
  }

  /** A group's runs under concurrency caps: a pipeline, or '@' and an owner → how many run now. */
  public String qRunH(int p, String group) {
    return in(p, "qRunH:" + group);
  }

  /**
   * An owner's limits as start and dequeue read them (weight, cap, rate: see owner-put.lua), copied into each
   * partition so that they read it in their own slot. With one partition it is ownerH itself.
   */
  public String ownerInPartitionH(int p, String owner) {
    return parts.count() == 1 ? ownerH(owner) : in(p, "ownerH:" + owner);
  }

  /** What every qOwnerZ name of a partition begins with (a script that knows group and owner only from a state). */
  public String qOwnerZPrefix(int p) {
    return in(p, "qOwnerZ:");
  }

  public String qOutL(int p, String group) {
    return in(p, "qOutL:" + group);
  }

  public String qAdminL(int p, String group) {
    return in(p, "qAdminL:" + group);
  }

  /** A node group's state in a partition while an operator has it paused or draining (see group-state.lua). */
  public String groupH(int p, String group) {
    return in(p, "groupH:" + group);
  }

  /**
   * A group's ring in a partition: a token while work may wait there (an idle node of the group blocks on
   * it when there is one partition), and the channel a script publishes on when it rings (nodes subscribe
   * to it when there are several).
   */
  public String qRingL(int p, String group) {
    return in(p, "qRingL:" + group);
  }

  public String processingZ(int p) {
    return in(p, "processingZ");
  }

  public String inflightZ(int p, String nodeId) {
    return in(p, "inflightZ:" + nodeId);
  }

  public String sleepingZ(int p) {
    return in(p, "sleepingZ");
  }

  /** Every transaction Redis holds in partition p, by its created time (ms): what search.lua walks. */
  public String liveZ(int p) {
    return in(p, "liveZ");
  }

  /** Partition p's index of live transactions that entered a phase (ended, retrying, waiting), by created. */
  public String phaseZ(int p, String phase) {
    return in(p, "phaseZ:" + phase);
  }

  /** Per owner, its live (not yet ended) transactions in the partition: what start holds against maxLive. */
  public String liveOwnersH(int p) {
    return in(p, "liveOwnersH");
  }

  /**
   * Partition p's cancel walk (lib/fork.lua): a stack of '<txId> <parentTxId>[ join]' entries, the
   * descendants of cancelled transactions still to cancel. cancel and complete push; cancel, complete and
   * cancel-walk (the cancel's loop, the reaper leader) pop, at most 20 a call.
   */
  public String cancelL(int p) {
    return in(p, "cancelL");
  }

  public String webhooksZ(int p) {
    return in(p, "webhooksZ");
  }

  public String toArchiveZ(int p) {
    return in(p, "toArchiveZ");
  }

  public String exceptionZ(int p) {
    return in(p, "exceptionZ");
  }

  /** txId → why the archive database refused it (JSON), for the transactions archive-quarantine set aside. */
  public String quarantineH(int p) {
    return in(p, "quarantineH");
  }

  public String eventsL(int p) {
    return in(p, "eventsL");
  }

  /** The stuck list (stuck.lua): stuckZ (txId → when found), stuckH (txId → why, JSON), stuckCountH (by reason). */
  public String stuck(int p, String name) {
    return in(p, "stuck" + name);
  }

  /**
   * Whether the partitions' channels (notify, rings) are shard channels: SPUBLISH in the scripts (lib/publish.lua
   * tells them by the partition tag in their name), SSUBSCRIBE on each, routed to its slot's master.
   */
  public boolean shardChannels() {
    return parts.count() > 1;
  }

  /** The command that subscribes to one of the partitions' channels (see shardChannels). */
  public io.vertx.redis.client.Request subscribe(String channel) {
    return io.vertx.redis.client.Request.cmd(shardChannels() ? io.vertx.redis.client.Command.SSUBSCRIBE
        : io.vertx.redis.client.Command.SUBSCRIBE).arg(channel);
  }

  /** Whether a pushed reply is a message on a subscribed channel ("message", or "smessage" for a shard one). */
  public static boolean isMessage(io.vertx.redis.client.Response push) {
    if (push == null || push.size() < 3) {
      return false;
    }
    String kind = String.valueOf(push.get(0));
    return kind.equals("message") || kind.equals("smessage");
  }

  /** The notify channel of a partition: completions and due webhooks are published on it. */
  public String notifyChannel(int p) {
    return in(p, "notify");
  }

  public String webhookCounter(int p, String urlHash) {
    return in(p, "webhookCounter:" + urlHash);
  }

  public String webhookPause(int p, String urlHash) {
    return in(p, "webhookPause:" + urlHash);
  }

  /**
   * What start and hop read of a pipeline (version, group, whether it is a transaction type), copied into
   * each partition so that they read it in their own slot. With one partition it is pipelineH itself.
   */
  public String pipelineInPartitionH(int p, String pipeline) {
    return parts.count() == 1 ? pipelineH(pipeline) : in(p, "pipelineH:" + pipeline);
  }

  /** The slot lengths of the three stats series, in ms (lua/lib/stats.lua has the same). */
  private static final long[] STATS_SLOTS = {5_000, 60_000, 600_000};

  /** The slot length (ms) of stats series 1, 2 or 3. */
  public static long statsSlotMs(int series) {
    return STATS_SLOTS[series - 1];
  }

  /** A stats hash of partition p: series 1, 2 or 3 (5 s, 60 s, 600 s slots), for the slot starting at slotStart (ms). */
  public String statsH(int p, int series, long slotStart) {
    return statsPrefix(p, series) + slotStart;
  }

  /** What every key of a stats series of partition p begins with (a script that knows the slots only from times). */
  public String statsPrefix(int p, int series) {
    return in(p, "stats" + series + "H:");
  }

  /** The start of the last 5 s stats slot of partition p folded into the 60 s and 600 s series (sample.lua). */
  public String statsFold(int p) {
    return in(p, "statsFold");
  }

  /** The stats1H, stats2H and stats3H keys of partition p for the slots that hold the given time. */
  public List<String> statsKeys(int p, long now) {
    List<String> out = new ArrayList<>(3);
    for (int i = 0; i < STATS_SLOTS.length; i++) {
      out.add(statsH(p, i + 1, now - Math.floorMod(now, STATS_SLOTS[i])));
    }
    return out;
  }

  /** The two lease keys of a leader-only role in a partition: reaperLock1, toArchiveLock1, webhookLock1 (and …Lock2). */
  public String lock1(LeaderRole role, int p) {
    return in(p, role.keyName + "Lock1");
  }

  public String lock2(LeaderRole role, int p) {
    return in(p, role.keyName + "Lock2");
  }

  // ---- cluster-wide keys: one slot

  public String pipelineH(String pipeline) {
    return global("pipelineH:" + pipeline);
  }

  public String pipelinesS() {
    return global("pipelinesS");
  }

  public String pipelineVersionsH(String pipeline) {
    return global("pipelineVersionsH:" + pipeline);
  }

  /** An owner's limits set through the admin API: weight, cap (maxConcurrency), rate (per second), updated. */
  public String ownerH(String owner) {
    return global("ownerH:" + owner);
  }

  /** The owners with limits set (ownerH). */
  public String ownersS() {
    return global("ownersS");
  }

  public String rateH(String owner) {
    return global("rateH:" + owner);
  }

  public String heartbeat(String nodeId) {
    return heartbeatPrefix() + nodeId + HEARTBEAT_SUFFIX;
  }

  /** What comes before the nodeId in a heartbeat key (reap.lua builds the keys of the nodes it finds). */
  public String heartbeatPrefix() {
    return global("node:");
  }

  /** What comes after the nodeId in a heartbeat key. */
  public static final String HEARTBEAT_SUFFIX = ":heartbeat";

  public String nodesZ() {
    return global("nodesZ");
  }

  /** Nodes judged dead whose work reap.lua has not yet taken over in every partition. */
  public String deadZ() {
    return global("deadZ");
  }

  /** The layout this keyspace was made with: {partitions}. A node with another layout refuses to start. */
  public String layoutH() {
    return global("layoutH");
  }

  /** The global lease of the liveness judge (the reaper that finds dead nodes). */
  public String lock1(LeaderRole role) {
    return global(role.keyName + "Lock1");
  }

  public String lock2(LeaderRole role) {
    return global(role.keyName + "Lock2");
  }
}
