package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.util.List;

/** Moving a pipeline's live transactions to another version, one batch of a partition's liveZ a call: migrate.lua. */
public final class MigrateStore extends Store {
  public MigrateStore(StoreContext r) {
    super(r);
  }

  /** What one call walked to (the cursor: a created time and how many of that time were walked), and its counts. */
  public record Batch(String score, long skip, boolean done, JsonObject counts) {
  }

  /** Where a walk of a partition begins. */
  public static final Batch FIRST = new Batch("", 0, false, new JsonObject());

  /**
   * One batch in partition p from the cursor of after: mode dry, apply or undo; maps is {fromVersion: [new step
   * index (0-based) per old step, -1 when not mapped]}.
   */
  public Future<Batch> batch(int p, String pipeline, String mode, String to, JsonObject maps, Batch after, int size,
                             String by) {
    return r.run(r.scripts().migrate, List.of(keys.liveZ(p), keys.eventsL(p)),
        List.of(pipeline, mode, to, maps.encode(), after.score(), Long.toString(after.skip()),
            Integer.toString(size), r.now(), by, keys.stateH(p, ""), Integer.toString(r.limits().maxErrors())))
        .map(MigrateStore::batch);
  }

  private static Batch batch(Response reply) {
    return new Batch(reply.get(0).toString(), reply.get(1).toLong(), reply.get(2).toInteger() == 1,
        new JsonObject(reply.get(3).toString()));
  }
}
