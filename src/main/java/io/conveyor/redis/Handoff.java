package io.conveyor.redis;

import io.conveyor.model.Dequeued;
import io.vertx.core.Future;
import java.util.List;

/**
 * A node's own workers, offered new work straight from its starts: when the group a start goes to has nothing
 * waiting, start.lua takes the transaction for the starting node in the same call (see start.lua, "the
 * hand-off"), which saves the ring, the wake-up and a dequeue. Safe from any thread: the slots are the workers'
 * own, so each call is a request to them (on their context), never a look into their state.
 */
public interface Handoff {
  /** The node's id (the inflightZ the hand-off records into). */
  String nodeId();

  /** The node group whose work this node runs. */
  String group();

  /**
   * Reserves up to n free worker slots for one start call; 0 when none (busy, stopping, fenced, full). Answered
   * on the caller's context; never fails.
   */
  Future<Integer> reserve(int n);

  /** The call answered: runs what it handed over (on the workers' own context); the reserved slots left go free. */
  void handed(int reserved, List<Dequeued> txs);

  /**
   * The call failed, so whether it handed anything over is not known: the reserved slots go free, and what this
   * node holds but does not run is put back on its queue before it takes more.
   */
  void lost(int reserved);

  /** No node workers here (a node without the dequeue role, a bench client, a tool). */
  Handoff NONE = new Handoff() {
    @Override
    public String nodeId() {
      return "";
    }

    @Override
    public String group() {
      return "";
    }

    @Override
    public Future<Integer> reserve(int n) {
      return Future.succeededFuture(0);
    }

    @Override
    public void handed(int reserved, List<Dequeued> txs) {
    }

    @Override
    public void lost(int reserved) {
    }
  };
}
