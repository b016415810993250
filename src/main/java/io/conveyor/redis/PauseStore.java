package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.redis.client.Response;
import java.util.ArrayList;
import java.util.List;

/** Pausing and resuming one transaction and (tree) what it waits for: pause.lua and resume.lua, a call each. */
public final class PauseStore extends Store {
  public PauseStore(StoreContext r) {
    super(r);
  }

  /**
   * A reply of pause.lua or resume.lua: its code, detail (the status, for ALREADY_FINAL and NOT_PAUSED), how many
   * it paused or resumed, and the txIds of the tree it did not reach (to call again for, naming the root).
   */
  public record Reply(Code code, String detail, long changed, List<String> left) {
  }

  /**
   * Pauses txId (an owner's) and, with tree, what it waits for, looking at most at budget transactions; root is
   * the transaction the caller paused ("" or txId itself: the event is logged for it).
   */
  public Future<Reply> pause(String txId, String owner, String by, String reason, boolean tree, String root,
                             int budget) {
    int p = keys.partitionOf(txId);
    return r.run(r.scripts().pause, List.of(keys.stateH(txId), keys.phaseZ(p, "paused"), keys.eventsL(p)),
        List.of(txId, owner, r.now(), by, reason == null ? "" : reason, tree ? "1" : "0", keys.stateH(p, ""),
            Integer.toString(budget), root == null ? "" : root)).map(PauseStore::reply);
  }

  /** Resumes txId (an owner's) and, with tree, what it waits for; skip: timers due meanwhile are moved, not fired. */
  public Future<Reply> resume(String txId, String owner, String by, boolean skip, boolean tree, String root,
                              int budget) {
    int p = keys.partitionOf(txId);
    return r.run(r.scripts().resume, List.of(keys.stateH(txId), keys.phaseZ(p, "paused"), keys.eventsL(p),
            keys.sleepingZ(p)),
        List.of(txId, owner, r.now(), by, skip ? "skip" : "fire", tree ? "1" : "0", keys.stateH(p, ""),
            Integer.toString(budget), root == null ? "" : root, keys.qInZ(p, ""), keys.qOutL(p, ""),
            keys.qAdminL(p, ""), keys.qRingL(p, ""))).map(PauseStore::reply);
  }

  private static Reply reply(Response reply) {
    Code code = Code.of(reply);
    if (code != Code.OK) {
      return new Reply(code, reply.size() > 1 ? reply.get(1).toString() : null, 0, List.of());
    }
    List<String> left = new ArrayList<>();
    for (int i = 2; i < reply.size(); i++) {
      left.add(reply.get(i).toString());
    }
    return new Reply(code, null, reply.get(1).toLong(), left);
  }
}
