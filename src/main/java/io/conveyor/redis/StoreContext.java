package io.conveyor.redis;

import io.conveyor.config.Config;
import io.conveyor.crypto.Encryption;
import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Clock;
import java.util.List;

/**
 * What the stores of one verticle share: its pipelined link, the key names, the scripts, the clock, how
 * many replicas must hold a start or completion before it is answered, the limits the scripts enforce, and the
 * node's encryption at rest (payloads are sealed and opened by the stores, see Store.payloads), and the node's
 * PartitionHealth (shared by every context of the node). Use it from that verticle's context only (see RedisLink).
 */
public record StoreContext(RedisLink link, Keys keys, Scripts scripts, Clock clock, Replicas replicas,
                           Config.Limits limits, Encryption encryption, PartitionHealth health) {

  /** Outside a node (a shell client, a test's own context): no probe, so no outcome is kept (PartitionHealth.ignoring). */
  public StoreContext(RedisLink link, Keys keys, Scripts scripts, Clock clock, Replicas replicas,
                      Config.Limits limits, Encryption encryption) {
    this(link, keys, scripts, clock, replicas, limits, encryption, PartitionHealth.ignoring(keys.partitions()));
  }

  /** The same context sharing another tracker (a test's own context, on its node's). */
  public StoreContext withHealth(PartitionHealth shared) {
    return new StoreContext(link, keys, scripts, clock, replicas, limits, encryption, shared);
  }

  public StoreContext(RedisLink link, Keys keys, Scripts scripts, Clock clock, Replicas replicas,
                      Config.Limits limits) {
    this(link, keys, scripts, clock, replicas, limits, Encryption.OFF);
  }

  public StoreContext(RedisLink link, Keys keys, Scripts scripts, Clock clock) {
    this(link, keys, scripts, clock, Replicas.NONE);
  }

  public StoreContext(RedisLink link, Keys keys, Scripts scripts, Clock clock, Replicas replicas) {
    this(link, keys, scripts, clock, replicas, Config.Limits.DEFAULTS);
  }

  /** Elapsed time (the link's): for deadlines and timings on this context. */
  public Ticker ticker() {
    return link.ticker();
  }

  /** "now" for a script, from the injected clock. */
  String now() {
    return Long.toString(clock.millis());
  }

  Future<Response> run(LuaScript script, List<String> keys, List<String> args) {
    return scripts.call(link, script, keys, args);
  }

  /** A script whose writes a failover must not drop: answered once the replicas have them (see Replicas). */
  Future<Response> runReplicated(LuaScript script, List<String> keys, List<String> args) {
    return replicas.count() == 0 ? run(script, keys, args) : scripts.call(link, script, keys, args, replicas);
  }

  /**
   * A start or complete call's stats counts (the element of its reply after the n answers, lib/stats.lua
   * stats_flat), made at now in partition p: added up on this link and written once a second (StatsTally). The
   * call's writes have landed, so a count that cannot be taken is logged, never the call's failure.
   */
  void countSafely(int p, long now, Response reply, int n) {
    try {
      // the 5 s slot's key only: the coarser series get the counts from the reaper's fold
      link.stats().add(keys.statsH(p, 1, now - Math.floorMod(now, Keys.statsSlotMs(1))), now,
          reply.size() > n ? reply.get(n) : null,
          scripts.sent(scripts.statsAdd), clock);
    } catch (RuntimeException e) {
      org.slf4j.LoggerFactory.getLogger(StoreContext.class).warn("stats: a call's counts were not taken: {}", e.toString());
    }
  }

  Future<Response> send(Request request) {
    return link.send(request);
  }

  public Future<Void> close() {
    return link.close();
  }
}
