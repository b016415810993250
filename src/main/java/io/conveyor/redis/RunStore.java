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
public final class RunStore extends Store {
  /** The errors a transaction keeps are the context's limits.maxErrors (the oldest fold into one, lib/errors.lua). */
  public RunStore(StoreContext r) {
    super(r);
  }

  /**
   * Records that a step finished: the next step and its input, and the step's time ("step:startMs:durationMs:node"),
   * to which the size of its output (characters of JSON) is added. OK, CANCELLED, FENCED, PAUSED: the
   * transaction is paused and has left this node, or MIGRATED: its next step is another version's and it has left
   * this node, queued again (checkpoint.lua).
   */
  public Future<Code> checkpoint(String txId, long attempt, int nextStep, JsonObject data, String stepTime) {
    return checkpoint(null, txId, attempt, nextStep, data, stepTime);
  }

  /** The same for an owner's transaction: the next step's input is sealed when the owner's payloads are. */
  public Future<Code> checkpoint(String owner, String txId, long attempt, int nextStep, JsonObject data,
                                 String stepTime) {
    String text = data.encode();
    int size = text.length();
    int p = keys.partitionOf(txId);
    return payloads().seal(owner, txId, "input", data).compose(sealed -> r.run(r.scripts().checkpoint,
            List.of(keys.stateH(txId), keys.processingZ(p)),
            List.of(Long.toString(attempt), Integer.toString(nextStep), sealed == data ? text : sealed.encode(),
                r.now(),
                stepTime == null ? "" : stepTime + ":" + size, txId, keys.inflightZ(p, ""),
                keys.qInZ(p, ""), keys.qRingL(p, ""), Integer.toString(r.limits().maxErrors()))))
        .map(Code::of);
  }

  /**
   * One transaction to complete, fenced by the attempt this node was given; error (or null) is the failed
   * last attempt's, kept in the transaction's errors.
   */
  public record Completion(String txId, long attempt, TxStatus status, JsonObject output, String note,
                           String stepTime, JsonObject error, String owner) {
    public Completion(String txId, long attempt, TxStatus status, JsonObject output, String note) {
      this(txId, attempt, status, output, note, null, null);
    }

    /** Without its owner: nothing of it is sealed. */
    public Completion(String txId, long attempt, TxStatus status, JsonObject output, String note, String stepTime,
                      JsonObject error) {
      this(txId, attempt, status, output, note, stepTime, error, null);
    }
  }

  /**
   * Completes a batch of transactions this node runs, one script call per partition they are in; each
   * answer stands on its own, in the order given.
   */
  public Future<List<Code>> complete(String nodeId, Duration archiveDelay, List<Completion> txs) {
    return Partitioned.all(completeEach(nodeId, archiveDelay, txs));
  }

  /**
   * The same, each completion answered on its own: those of a partition whose call failed fail with its error, the
   * others are answered when their own partition answers.
   */
  public List<Future<Code>> completeEach(String nodeId, Duration archiveDelay, List<Completion> txs) {
    return Partitioned.after(Seals.completions(payloads(), txs), txs.size(), sealed -> Partitioned.each(keys,
        sealed, Completion::txId, (p, some) -> completeIn(p, nodeId, archiveDelay, some)));
  }

  /**
   * This node's completions batched per partition (at most max a call), so one partition's trouble holds only its
   * own; their outcomes feed the node's PartitionHealth.
   */
  public PartitionBatchers<Completion, Code> completions(String nodeId, Duration archiveDelay, int max) {
    return new PartitionBatchers<>(keys, Completion::txId, max, txs -> completeEach(nodeId, archiveDelay, txs),
        r.health(), r.ticker(), r.link().linger());
  }

  /** A dequeued transaction with its step input, metadata and child's output opened (Seals.opened). */
  public Future<Dequeued> opened(Dequeued tx) {
    return Seals.opened(payloads(), tx);
  }

  private Future<List<Code>> completeIn(int p, String nodeId, Duration archiveDelay, List<Completion> txs) {
    long now = r.clock().millis();
    List<String> k = new ArrayList<>(10 + 2 * txs.size());
    k.addAll(List.of(keys.processingZ(p), keys.inflightZ(p, nodeId), keys.toArchiveZ(p), keys.notifyChannel(p),
        keys.webhooksZ(p)));
    k.add(keys.sleepingZ(p));
    k.add(keys.liveZ(p));
    k.add(keys.cancelL(p));
    k.add(keys.phaseZ(p, "ended"));
    List<String> args = new ArrayList<>(8 + 7 * txs.size());
    args.addAll(List.of(Long.toString(now), Long.toString(archiveDelay.toMillis()), keys.stateH(p, ""),
        keys.qOutL(p, ""), keys.qRingL(p, ""), keys.pipelineInPartitionH(p, ""), keys.qInZ(p, ""),
        keys.webhookH(p, "")));
    for (Completion c : txs) {
      k.add(keys.stateH(c.txId()));
      k.add(keys.webhookH(c.txId()));
      args.addAll(List.of(c.txId(), Long.toString(c.attempt()), c.status().wire(),
          c.output() == null ? "" : c.output().encode(), c.note() == null ? "" : c.note(),
          c.stepTime() == null ? "" : c.stepTime(), c.error() == null ? "" : c.error().encode()));
    }
    k.add(keys.liveOwnersH(p));
    args.add(Integer.toString(r.limits().maxErrors()));
    return r.runReplicated(r.scripts().complete, k, args).map(reply -> {
      // a code per transaction, then the call's stats counts
      List<Code> out = new ArrayList<>(txs.size());
      for (int i = 0; i < txs.size(); i++) {
        out.add(Code.of(reply.get(i)));
      }
      r.countSafely(p, now, reply, txs.size());
      return out;
    });
  }

  /** An owner's own maxPayloadBytes (ownerH, set through the admin API), or null when it has none. */
  public Future<Integer> ownMaxPayloadBytes(String owner) {
    return r.send(io.vertx.redis.client.Request.cmd(io.vertx.redis.client.Command.HGET).arg(keys.ownerH(owner))
        .arg("maxPayloadBytes")).map(v -> v == null ? null : v.toInteger());
  }

  /** A fresh txId for a child of this parent: in the parent's partition (see hop). */
  public String childTxId(String parentTxId) {
    return keys.newTxId(keys.partitionOf(parentTxId));
  }

  /**
   * Reply of hop.lua: code plus a detail (the child's version, the group it really belongs to, or for a limit
   * the depth or count it would reach) and, for a limit, the limit's value.
   */
  public record HopReply(Code code, String detail, String limit) {
  }

  /**
   * Queues a child pipeline in its group and lets the parent (run by this node) wait for it. The child
   * lives in its parent's partition (childTxId must be one of it: Keys.newTxId), so handing its result back
   * stays in one slot. trace is the child's traceparent (the span of the step that starts it), or null.
   */
  public Future<HopReply> hop(Dequeued parent, String nodeId, int step, String childTxId, String childType,
                              JsonObject input, String childGroup, String trace) {
    long now = r.clock().millis();
    int p = keys.partitionOf(parent.txId());
    if (keys.partitionOf(childTxId) != p) {
      throw new IllegalArgumentException("child " + childTxId + " is not in its parent's partition " + p);
    }
    List<String> k = new ArrayList<>(List.of(keys.stateH(parent.txId()), keys.stateH(childTxId),
        keys.pipelineInPartitionH(p, childType), keys.qInZ(p, childGroup), keys.qRingL(p, childGroup),
        keys.processingZ(p), keys.inflightZ(p, nodeId)));
    k.addAll(keys.statsKeys(p, now));
    k.add(keys.liveZ(p));
    k.add(keys.liveOwnersH(p));
    k.add(keys.phaseZ(p, "waiting"));
    return payloads().seal(parent.owner(), childTxId, "input", input).compose(sealed -> r.run(r.scripts().hop, k,
        List.of(parent.txId(), Long.toString(parent.attempt()), Integer.toString(step), childTxId,
        childType, sealed.encode(), Long.toString(now), childGroup, trace == null ? "" : trace, keys.stateH(p, ""),
        Integer.toString(r.limits().maxDepth()), Integer.toString(r.limits().maxDescendants()))))
        .map(reply -> new HopReply(Code.of(reply), reply.size() > 1 ? reply.get(1).toString() : null,
            reply.size() > 2 ? reply.get(2).toString() : null));
  }

  /** A parallel step's join: how many branches must succeed, whether all must, on failure go on, at most at once. */
  public record Join(int need, boolean all, boolean continueOnFailure, int maxConcurrency) {
  }

  /** One branch: its txId (of the parent's partition), pipeline, input, and the group the caller believes it in. */
  public record Branch(String txId, String pipeline, JsonObject input, String group) {
  }

  /**
   * Reply of fork.lua: code plus the pipeline it concerns and, for GROUP_CHANGED, its real group; for a limit,
   * the depth or count the branches would reach and the limit's value.
   */
  public record ForkReply(Code code, String pipeline, String group) {
  }

  /**
   * Starts the branches of a parallel step as children of the parent (run by this node), which then waits for
   * their join (see fork.lua). branchTxIds must be of the parent's partition (childTxId); groups[i] is the
   * group the caller believes branch i's pipeline belongs to. trace is the branches' traceparent, or null.
   */
  public Future<ForkReply> fork(Dequeued parent, String nodeId, int step, Join join, List<Branch> branches,
                                String trace) {
    return Seals.branches(payloads(), parent.owner(), branches).compose(sealed -> forkSealed(parent, nodeId, step,
        join, sealed, trace));
  }

  private Future<ForkReply> forkSealed(Dequeued parent, String nodeId, int step, Join join, List<Branch> branches,
                                       String trace) {
    long now = r.clock().millis();
    int p = keys.partitionOf(parent.txId());
    List<String> k = new ArrayList<>(9 + 4 * branches.size());
    k.addAll(List.of(keys.stateH(parent.txId()), keys.processingZ(p), keys.inflightZ(p, nodeId)));
    k.addAll(keys.statsKeys(p, now));
    k.add(keys.liveZ(p));
    k.add(keys.phaseZ(p, "waiting"));
    List<String> args = new ArrayList<>(8 + 4 * branches.size());
    args.addAll(List.of(parent.txId(), Long.toString(parent.attempt()), Integer.toString(step), Long.toString(now),
        Integer.toString(join.need()), join.all() ? "1" : "0", join.continueOnFailure() ? "1" : "0",
        Integer.toString(join.maxConcurrency())));
    for (Branch b : branches) {
      if (keys.partitionOf(b.txId()) != p) {
        throw new IllegalArgumentException("branch " + b.txId() + " is not in its parent's partition " + p);
      }
      k.addAll(List.of(keys.stateH(b.txId()), keys.pipelineInPartitionH(p, b.pipeline()), keys.qInZ(p, b.group()),
          keys.qRingL(p, b.group())));
      args.addAll(List.of(b.txId(), b.pipeline(), b.input().encode(), b.group()));
    }
    args.addAll(List.of(trace == null ? "" : trace, keys.stateH(p, ""), Integer.toString(r.limits().maxDepth()),
        Integer.toString(r.limits().maxDescendants())));
    k.add(keys.liveOwnersH(p));
    return r.run(r.scripts().fork, k, args).map(reply -> new ForkReply(Code.of(reply),
        reply.size() > 1 ? reply.get(1).toString() : null, reply.size() > 2 ? reply.get(2).toString() : null));
  }

  /** Lets a running transaction sleep until wakeAt or its switch changes: SLEEPING, REQUEUED or FENCED. */
  public Future<Code> sleep(Dequeued tx, String nodeId, String group, long wakeAt, String switchName) {
    int p = keys.partitionOf(tx.txId());
    List<String> k = List.of(keys.stateH(tx.txId()), keys.sleepingZ(p), keys.processingZ(p),
        keys.inflightZ(p, nodeId), keys.qInZ(p, group), keys.qRingL(p, group), keys.phaseZ(p, "waiting"),
        keys.phaseZ(p, "retrying"));
    return r.run(r.scripts().sleep, k, List.of(tx.txId(), Long.toString(tx.attempt()), Long.toString(wakeAt),
        switchName == null ? "" : switchName, r.now())).map(Code::of);
  }

  /**
   * A failed step waits off the worker for its next attempt, due at dueAt (see retry.lua): SLEEPING, CANCELLED
   * (its owner asked to cancel it; nothing written) or FENCED. view is what status shows meanwhile; error is
   * the failed attempt's, kept in the transaction's errors.
   */
  public Future<Code> retry(Dequeued tx, String nodeId, long dueAt, int nextAttempt, JsonObject view,
                            JsonObject error, String stepTime) {
    int p = keys.partitionOf(tx.txId());
    List<String> k = List.of(keys.stateH(tx.txId()), keys.sleepingZ(p), keys.processingZ(p),
        keys.inflightZ(p, nodeId), keys.phaseZ(p, "retrying"));
    Future<JsonObject> sealedError = payloads().sealError(tx.owner(), tx.txId(), error);
    return sealedError.compose(e -> r.run(r.scripts().retry, k, List.of(tx.txId(), Long.toString(tx.attempt()),
        Long.toString(dueAt), Integer.toString(nextAttempt), (view.containsKey("lastError") ? view.copy().put("lastError", e) : view).encode(), e.encode(),
        r.now(), stepTime == null ? "" : stepTime, Integer.toString(r.limits().maxErrors()))))
        .map(Code::of);
  }

  /** Records a running step's progress report (fenced by attempt): OK, NOT_FOUND or FENCED. */
  public Future<Code> progress(String txId, long attempt, JsonObject report) {
    int p = keys.partitionOf(txId);
    return r.run(r.scripts().progress, List.of(keys.stateH(txId), keys.webhooksZ(p), keys.notifyChannel(p)),
        List.of(txId, Long.toString(attempt), report.encode(), r.now(), keys.webhookH(p, ""))).map(Code::of);
  }
}
