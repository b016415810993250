package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.List;

/** The memory guard's reading of the Redis that holds a partition (memory.lua), and its crossing events. */
public final class MemoryStore extends Store {

  /** used_memory and maxmemory of a partition's master, in bytes (max 0: no maxmemory set). */
  public record Reading(long used, long max) {
  }

  public MemoryStore(StoreContext r) {
    super(r);
  }

  /** Partition p's master's memory. */
  public Future<Reading> read(int p) {
    return run(p, "", "", new JsonObject());
  }

  /** The same, recording an event of this kind (redis-memory-high, redis-memory-ok) that node saw. */
  public Future<Reading> read(int p, String event, String nodeId, JsonObject details) {
    return run(p, event, nodeId, details);
  }

  private Future<Reading> run(int p, String event, String nodeId, JsonObject details) {
    return r.run(r.scripts().memory, List.of(keys.eventsL(p)), List.of(r.now(), event, nodeId, details.encode()))
        .map(reply -> new Reading(reply.get(0).toLong(), reply.get(1).toLong()));
  }
}
