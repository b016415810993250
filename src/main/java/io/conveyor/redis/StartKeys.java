package io.conveyor.redis;

/**
 * The keys of a start that follow from its partition, group, pipeline and owner (start.lua's per-transaction keys
 * bar its state, externalId and gate keys). A start call's transactions mostly share them, so each key string is made
 * once for a run of alike starts, not once a start (QueueStore.startIn).
 */
final class StartKeys {
  /** Before the first start of a call: matches none. */
  static final StartKeys NONE = new StartKeys(-1, "", "", "", null, null, null, null, null);

  private final int partition;
  private final String group;
  private final String type;
  private final String owner;
  final String pipeline;
  final String in;
  final String ring;
  final String fair;
  final String ownerQueue;

  private StartKeys(int partition, String group, String type, String owner, String pipeline, String in, String ring,
                    String fair, String ownerQueue) {
    this.partition = partition;
    this.group = group;
    this.type = type;
    this.owner = owner;
    this.pipeline = pipeline;
    this.in = in;
    this.ring = ring;
    this.fair = fair;
    this.ownerQueue = ownerQueue;
  }

  /** These keys when they are this start's too, else the start's own (each made again only where it differs). */
  StartKeys of(Keys keys, int p, String g, String t, String o) {
    boolean sameGroup = p == partition && g.equals(group);
    boolean sameType = p == partition && t.equals(type);
    boolean sameOwner = sameGroup && o.equals(owner);
    if (sameGroup && sameType && sameOwner) {
      return this;
    }
    return new StartKeys(p, g, t, o, sameType ? pipeline : keys.pipelineInPartitionH(p, t),
        sameGroup ? in : keys.qInZ(p, g), sameGroup ? ring : keys.qRingL(p, g), sameGroup ? fair : keys.qFairH(p, g),
        sameOwner ? ownerQueue : keys.qOwnerZ(p, g, o));
  }
}
