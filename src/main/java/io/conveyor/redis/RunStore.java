package io.conveyor.redis;

import io.conveyor.model.Dequeued;
import io.conveyor.model.TxStatus;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The writes of a node running a transaction, each fenced by the attempt it was given: checkpoint after a
 * step, completion, a hop to a child pipeline, a sleep, a progress report.
 */
public final class RunStore {
  private final StoreContext r;
  private final Keys keys;

  public RunStore(StoreContext r) {
    this.r = r;
    this.keys = r.keys();
  }

  /** Records that a step finished: the next step and its input, and the step's time ("step:startMs:durationMs"). */
  public Future<Code> checkpoint(String txId, long attempt, int nextStep, JsonObject data, String stepTime) {
    return r.run(r.scripts().checkpoint, List.of(keys.stateH(txId)),
            List.of(Long.toString(attempt), Integer.toString(nextStep), data.encode(), r.now(),
                stepTime == null ? "" : stepTime))
        .map(Code::of);
  }

  /** One transaction to complete, fenced by the attempt this node was given. */
  public record Completion(String txId, long attempt, TxStatus status, JsonObject output, String note,
                           String stepTime) {
    public Completion(String txId, long attempt, TxStatus status, JsonObject output, String note) {
      this(txId, attempt, status, output, note, null);
    }
  }

  /** Completes a batch of transactions this node runs, in one script call; each answer stands on its own. */
  public Future<List<Code>> complete(String nodeId, Duration archiveDelay, List<Completion> txs) {
    long now = r.clock().millis();
    List<String> k = new ArrayList<>(8 + 2 * txs.size());
    k.addAll(List.of(keys.processingZ(), keys.inflightZ(nodeId), keys.toArchiveZ(), keys.notifyChannel(),
        keys.webhooksZ()));
    k.addAll(keys.statsKeys(now));
    List<String> args = new ArrayList<>(5 + 6 * txs.size());
    args.addAll(List.of(Long.toString(now), Long.toString(archiveDelay.toMillis()), keys.stateH(""), keys.qOutL(""),
        keys.qRingL("")));
    for (Completion c : txs) {
      k.add(keys.stateH(c.txId()));
      k.add(keys.webhookH(c.txId()));
      args.addAll(List.of(c.txId(), Long.toString(c.attempt()), c.status().wire(),
          c.output() == null ? "" : c.output().encode(), c.note() == null ? "" : c.note(),
          c.stepTime() == null ? "" : c.stepTime()));
    }
    return r.run(r.scripts().complete, k, args).map(reply -> {
      List<Code> out = new ArrayList<>(reply.size());
      reply.forEach(one -> out.add(Code.of(one)));
      return out;
    });
  }

  /** Reply of hop.lua: code plus a detail (the child's version, or the group it really belongs to). */
  public record HopReply(Code code, String detail) {
  }

  /** Queues a child pipeline in its group and lets the parent (run by this node) wait for it. */
  public Future<HopReply> hop(Dequeued parent, String nodeId, int step, String childTxId, String childType,
                              JsonObject input, String childGroup) {
    long now = r.clock().millis();
    List<String> k = new ArrayList<>(List.of(keys.stateH(parent.txId()), keys.stateH(childTxId),
        keys.pipelineH(childType), keys.qInL(childGroup), keys.qRingL(childGroup), keys.processingZ(),
        keys.inflightZ(nodeId)));
    k.addAll(keys.statsKeys(now));
    List<String> args = List.of(parent.txId(), Long.toString(parent.attempt()), Integer.toString(step), childTxId,
        childType, input.encode(), Long.toString(now), childGroup);
    return r.run(r.scripts().hop, k, args)
        .map(reply -> new HopReply(Code.of(reply), reply.size() > 1 ? reply.get(1).toString() : null));
  }

  /** Lets a running transaction sleep until wakeAt or its switch changes: SLEEPING, REQUEUED or FENCED. */
  public Future<Code> sleep(Dequeued tx, String nodeId, String group, long wakeAt, String switchName) {
    List<String> k = List.of(keys.stateH(tx.txId()), keys.sleepingZ(), keys.processingZ(), keys.inflightZ(nodeId),
        keys.qInL(group), keys.qRingL(group));
    return r.run(r.scripts().sleep, k, List.of(tx.txId(), Long.toString(tx.attempt()), Long.toString(wakeAt),
        switchName == null ? "" : switchName, r.now())).map(Code::of);
  }

  /** Records a running step's progress report (fenced by attempt): OK, NOT_FOUND or FENCED. */
  public Future<Code> progress(String txId, long attempt, JsonObject report) {
    return r.run(r.scripts().progress, List.of(keys.stateH(txId), keys.webhooksZ(), keys.notifyChannel()),
        List.of(txId, Long.toString(attempt), report.encode(), r.now(), keys.webhookH(""))).map(Code::of);
  }
}
