package io.conveyor.redis;

import static io.conveyor.redis.Replies.emptyToNull;
import static io.conveyor.redis.Replies.json;
import static io.conveyor.redis.Replies.str;

import io.conveyor.model.Dequeued;
import io.conveyor.model.StartRequest;
import io.conveyor.model.TxStatus;
import io.conveyor.model.WebhookUrl;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** Work on the group queues: starting transactions, taking them for a node, putting back what it lost. */
public final class QueueStore extends Store {
  /** The live transactions an owner may have are the context's limits.maxLive (its ownerH field maxLive replaces it). */
  public QueueStore(StoreContext r) {
    super(r);
  }

  /**
   * One transaction to start: its new txId, the request, the group its pipeline is believed to be in, the
   * delay of its completion webhook's first attempt, its trace (traceparent) or null, and its owner's share of
   * the group's in-queue (0: no fair share; see lib/queue.lua).
   */
  public record NewTx(String txId, StartRequest req, String group, Duration webhookDelay, String trace, int share,
                      GateStart gate, String pipelineGate) {
    public NewTx(String txId, StartRequest req, String group) {
      this(txId, req, group, Duration.ZERO, null, 0);
    }

    public NewTx(String txId, StartRequest req, String group, Duration webhookDelay, String trace, int share) {
      this(txId, req, group, webhookDelay, trace, share, null, "");
    }
  }

  /**
   * A start's gate as decided at the edge (lib/gate.lua): the key's value for this start, and what start.lua is
   * given (model/Gate.decided, as JSON text). pipelineGate on NewTx is the pipeline's gate text the caller went by.
   */
  public record GateStart(String kind, String value, String decided) {
    /** What names the gate after its owner and pipeline: its kind and key value (debounce:d-1). */
    String id() {
      return kind + ":" + value;
    }
  }

  /**
   * The partition of a gate (owner, pipeline, kind and key value; GateStart.id): its gated transactions live there
   * too.
   */
  public int gatePartition(String owner, String type, GateStart gate) {
    return keys.partitionFor(owner, "gate:" + type + ":" + gate.id());
  }

  /** A fresh txId for a gated start: in its gate's partition, so the decision is part of the start's script. */
  public String newGatedTxId(String owner, String type, GateStart gate) {
    return keys.newTxId(gatePartition(owner, type, gate));
  }

  /** gateH and gateZ of a gate, in its partition (lib/gate.lua). */
  List<String> gateKeys(String owner, String type, GateStart gate) {
    int p = gatePartition(owner, type, gate);
    String id = owner.length() + ":" + owner + ":" + type + ":" + gate.id();
    return List.of(keys.in(p, "gateH:" + id), keys.in(p, "gateZ:" + id));
  }

  /**
   * Reply of start.lua for one transaction: code plus a detail (version, group or existing txId), and its time;
   * for a start that went in, the processingState start.lua gave it (queued, scheduled, or processing when it
   * was handed to this node) and when it starts (ms; 0: at once). Read these; do not decide them again.
   */
  public record StartReply(Code code, String detail, long created, String state, long startAt) {
  }

  /**
   * A fresh txId for a start: in the partition of its owner and externalId when it has one (so the de-dup
   * check runs in the start's own script), else in any.
   */
  public String newTxId(String owner, String externalId) {
    return keys.newTxId(keys.partitionFor(owner, externalId));
  }

  /** Starts one transaction (priority levels give no head start: see lib/queue.lua). */
  public Future<StartReply> start(NewTx tx, Duration externalIdPeriod) {
    return start(List.of(tx), externalIdPeriod, 0, 0).map(replies -> replies.get(0));
  }

  /**
   * Starts a batch of transactions, one script call per partition they are in (a txId names its partition:
   * Keys.newTxId); each answer stands on its own, in the order given.
   */
  public Future<List<StartReply>> start(List<NewTx> txs, Duration externalIdPeriod, long priorityStepMillis,
                                        int ownerShare) {
    return start(txs, externalIdPeriod, priorityStepMillis, ownerShare, Handoff.NONE);
  }

  /**
   * The same, offering the node's free workers (handoff): a start whose group has nothing waiting is taken for
   * this node in the same call, and handed to its workers (see start.lua). Fails with the first failure; startEach
   * answers each start on its own.
   */
  public Future<List<StartReply>> start(List<NewTx> txs, Duration externalIdPeriod, long priorityStepMillis,
                                        int ownerShare, Handoff handoff) {
    return Partitioned.all(startEach(txs, externalIdPeriod, priorityStepMillis, ownerShare, handoff));
  }

  /**
   * Starts a batch, one script call per partition, each start answered on its own and in the order given: the
   * starts of a partition whose call failed fail with its error, the others are answered when their own partition
   * answers.
   */
  public List<Future<StartReply>> startEach(List<NewTx> txs, Duration externalIdPeriod, long priorityStepMillis,
                                            int ownerShare, Handoff handoff) {
    if (txs.stream().noneMatch(t -> payloads().sealsFor(t.req().owner()))) {
      return Partitioned.each(keys, txs, NewTx::txId, (p, some) -> startIn(p, some, externalIdPeriod,
          priorityStepMillis, ownerShare, handoff));
    }
    return Partitioned.after(Seals.starts(payloads(), txs), txs.size(), sealed -> Partitioned.each(keys, sealed,
        NewTx::txId, (p, some) -> startIn(p, some, externalIdPeriod, priorityStepMillis, ownerShare, handoff)));
  }

  /**
   * This node's starts batched per partition (at most max a call), so one partition's trouble holds only its own;
   * handoff is asked at each call, and the outcomes feed the node's PartitionHealth.
   */
  public PartitionBatchers<NewTx, StartReply> starts(int max, Duration externalIdPeriod, long priorityStepMillis,
                                                     int ownerShare, java.util.function.Supplier<Handoff> handoff) {
    return new PartitionBatchers<>(keys, NewTx::txId, max, txs -> startEach(txs, externalIdPeriod,
        priorityStepMillis, ownerShare, handoff.get()), r.health(), r.ticker(), r.link().linger());
  }

  private Future<List<StartReply>> startIn(int p, List<NewTx> txs, Duration externalIdPeriod,
                                           long priorityStepMillis, int ownerShare, Handoff handoff) {
    long now = r.clock().millis();
    // no hand-off into a partition that is not ok: a call that fails there would hold this node's takes while
    // what it may have handed over is put back (in every partition)
    String group = r.health().state(p) == PartitionHealth.State.OK ? handoff.group() : "";
    int mine = 0;
    long[] startAts = new long[txs.size()];
    List<String> k = new ArrayList<>(10 + 9 * txs.size());
    k.addAll(List.of(keys.sleepingZ(p), keys.liveZ(p)));
    List<String> args = new ArrayList<>(10 + 18 * txs.size());
    args.addAll(List.of(Long.toString(now), Long.toString(externalIdPeriod.toMillis()),
        Long.toString(priorityStepMillis), Integer.toString(ownerShare), keys.ownerInPartitionH(p, "")));
    StartKeys names = StartKeys.NONE; // the keys alike starts share, made once for a run of them
    int fixedKeys = k.size();
    int fixedArgs = args.size();
    for (int i = 0; i < txs.size(); i++) {
      NewTx tx = txs.get(i);
      StartRequest req = tx.req();
      long startAt = req.startAtMillis(now);
      startAts[i] = startAt;
      // offered for the hand-off: it goes to the node's own group and starts at once; start.lua takes it when
      // Redis says the group is idle and no limit holds
      boolean offered = startAt == 0 && tx.group().equals(group);
      mine += offered ? 1 : 0;
      String state = keys.stateH(tx.txId());
      boolean webhook = req.webhook() != null;
      if (req.externalId() != null && keys.partitionFor(req.owner(), req.externalId()) != p) {
        throw new IllegalArgumentException(tx.txId() + " is not in the partition of its externalId");
      }
      GateStart gate = tx.gate();
      if (gate != null && gatePartition(req.owner(), req.type(), gate) != p) {
        throw new IllegalArgumentException(tx.txId() + " is not in the partition of its gate");
      }
      names = names.of(keys, p, tx.group(), req.type(), req.owner());
      k.addAll(List.of(state, names.pipeline, names.in, names.ring, req.externalId() == null ? state
          : keys.externalId(req.owner(), req.externalId()), names.fair, names.ownerQueue));
      k.addAll(gate == null ? List.of(state, state) : gateKeys(req.owner(), req.type(), gate));
      args.addAll(List.of(tx.txId(), req.owner(), req.type(), req.externalId() == null ? "" : req.externalId(),
          req.metadataJson(), req.inputJson(), tx.group(), webhook ? req.webhook() : "",
          webhook ? WebhookUrl.hash(req.webhook()) : "", webhook ? Long.toString(tx.webhookDelay().toMillis()) : "",
          webhook && Boolean.TRUE.equals(req.metadata().getValue("progressReports")) ? "1" : "",
          startAt == 0 ? "" : Long.toString(startAt),
          req.priority() == null ? "" : Integer.toString(req.priority()), tx.trace() == null ? "" : tx.trace(),
          Integer.toString(tx.share()), offered ? "1" : "", gate == null ? "" : gate.decided(),
          tx.pipelineGate() == null ? "" : tx.pipelineGate()));
    }
    int offers = mine;
    // slots are reserved last, once nothing above can throw: every reservation ends in handed or lost
    Future<Integer> offer = offers == 0 ? Future.succeededFuture(0) : handoff.reserve(offers);
    return offer.compose(offered -> {
      String g = offered > 0 ? group : txs.get(0).group(); // any names of the partition when nothing is offered
      k.addAll(fixedKeys, List.of(keys.qAdminL(p, g), keys.qOutL(p, g), keys.qInZ(p, g), keys.qHeldS(p, g),
          keys.groupH(p, g), keys.processingZ(p), keys.inflightZ(p, offered > 0 ? handoff.nodeId() : "")));
      args.addAll(fixedArgs, List.of(offered > 0 ? handoff.nodeId() : "", Integer.toString(offered),
          offered > 0 ? group : ""));
      k.add(keys.liveOwnersH(p));
      args.add(Integer.toString(r.limits().maxLive()));
      args.add(Integer.toString(keys.partitions()));
      Future<Response> call;
      try {
        call = r.runReplicated(r.scripts().start, k, args);
      } catch (RuntimeException e) { // never answered: the reservation must still end (lost)
        call = Future.failedFuture(e);
      }
      Future<List<StartReply>> sent = call.map(reply -> {
        List<StartReply> answers = replies(reply, now, txs, startAts, offered, handoff);
        r.countSafely(p, now, reply, txs.size());
        return answers;
      });
      if (offered > 0) {
        sent.onFailure(e -> handoff.lost(offered));
      }
      return sent;
    });
  }

  /**
   * start.lua's reply, one answer per transaction (then the call's stats counts, taken by the caller); what it
   * handed over goes to the node's workers.
   */
  private static List<StartReply> replies(Response reply, long now, List<NewTx> txs, long[] startAts, int offered,
                                          Handoff handoff) {
    List<StartReply> out = new ArrayList<>(startAts.length);
    List<Dequeued> handed = offered > 0 ? new ArrayList<>() : List.of();
    for (int i = 0; i < startAts.length; i++) {
      Response one = reply.get(i);
      String state = one.size() > 2 ? one.get(2).toString() : null;
      String version = one.get(1).toString();
      out.add(new StartReply(Code.of(one), version, now, state, startAts[i]));
      if (offered > 0 && "processing".equals(state)) {
        handed.add(handedRun(txs.get(i), version, now));
      }
    }
    if (offered > 0) {
      handoff.handed(offered, handed);
    }
    return out;
  }

  /** Takes up to max transactions of a group in a partition for this node, admin first, then out, then in. */
  public Future<List<Dequeued>> dequeue(int p, String group, String nodeId, int max) {
    return take(p, group, nodeId, max).map(Taken::txs);
  }

  /**
   * What a dequeue took, and heldReadyMs: when work is held back by a rate limit with no token now, the ms until
   * the first such limit has one (else 0); the caller rings the group then.
   */
  public record Taken(List<Dequeued> txs, long heldReadyMs) {
  }

  /** dequeue, with the hint for work held by a rate limit (see Taken). */
  public Future<Taken> take(int p, String group, String nodeId, int max) {
    long now = r.clock().millis();
    List<String> k = new ArrayList<>(List.of(keys.qAdminL(p, group), keys.qOutL(p, group), keys.qInZ(p, group),
        keys.processingZ(p), keys.inflightZ(p, nodeId), keys.qRingL(p, group)));
    k.addAll(keys.statsKeys(p, now));
    k.add(keys.groupH(p, group));
    k.addAll(List.of(keys.qFairH(p, group), keys.qHeldS(p, group), keys.qRateH(p, group), keys.qRunH(p, group)));
    return r.run(r.scripts().dequeue, k, List.of(Integer.toString(max), nodeId, Long.toString(now),
        keys.stateH(p, ""), group, keys.qOwnerZ(p, group, ""), keys.pipelineInPartitionH(p, ""),
        keys.qHeldZ(p, group, ""), Integer.toString(keys.partitions()), Integer.toString(p),
        keys.ownerInPartitionH(p, "")))
        .map(QueueStore::taken);
  }

  private static Taken taken(Response reply) {
    long hint = 0;
    Response last = reply.size() == 0 ? null : reply.get(reply.size() - 1);
    if (last != null && last.type() == io.vertx.redis.client.ResponseType.NUMBER) {
      hint = last.toLong();
    }
    return new Taken(dequeued(reply), hint);
  }

  /** Each entry on its own: the script has taken them all, so one bad state must not hide the others. */
  private static List<Dequeued> dequeued(Response reply) {
    List<Dequeued> out = new ArrayList<>(reply.size());
    for (Response e : reply) {
      if (e.type() != io.vertx.redis.client.ResponseType.NUMBER) { // a number is the held-work hint (see Taken)
        out.add(entry(e));
      }
    }
    return out;
  }

  /**
   * A start the hand-off took, as dequeue.lua would answer its run: attempt 1 at step 0 of the in-queue, no child
   * result or switches. start.lua answers only its version: the rest is what this call sent (input and metadata as
   * stored, sealed where the owner's are), so it is not sent back and read again.
   */
  private static Dequeued handedRun(NewTx tx, String version, long now) {
    StartRequest req = tx.req();
    try {
      return new Dequeued(tx.txId(), 1, req.type(), version, 0, new JsonObject(req.inputJson()), req.owner(),
          emptyToNull(req.externalId()), new JsonObject(req.metadataJson()), now, "in", null, 0, new JsonObject(), 1,
          emptyToNull(tx.trace()), 1, -1, null);
    } catch (RuntimeException bad) {
      return Dequeued.unreadable(tx.txId(), 1, bad.toString());
    }
  }

  /** One run taken for this node, as dequeue.lua answers it; unreadable if it is bad. */
  private static Dequeued entry(Response e) {
    String txId = str(e.get(0));
    long attempt = e.get(1).toLong();
    try {
      String childStatus = emptyToNull(str(e.get(11)));
      Dequeued.ChildResult child = childStatus == null ? null : new Dequeued.ChildResult(
          TxStatus.fromWire(childStatus), json(e.get(12)), emptyToNull(str(e.get(13))));
      return new Dequeued(txId, attempt, str(e.get(2)), str(e.get(3)), Integer.parseInt(str(e.get(4))),
          json(e.get(5)), str(e.get(6)), emptyToNull(str(e.get(7))), json(e.get(8)),
          Long.parseLong(str(e.get(9))), str(e.get(10)), child, Integer.parseInt(str(e.get(14))),
          switchValues(json(e.get(15))), Integer.parseInt(str(e.get(16))), emptyToNull(str(e.get(17))),
          // an answer without these is a first run, never taken over
          e.size() > 18 ? Integer.parseInt(str(e.get(18))) : 1,
          e.size() > 19 && !str(e.get(19)).isEmpty() ? Integer.parseInt(str(e.get(19))) : -1, null);
    } catch (RuntimeException bad) {
      return Dequeued.unreadable(txId, attempt, bad.toString());
    }
  }

  /** {name: {value, seq}} as stored, to {name: value} as a step sees it. */
  private static JsonObject switchValues(JsonObject stored) {
    JsonObject values = new JsonObject();
    if (stored != null) {
      stored.forEach(e -> values.put(e.getKey(), ((JsonObject) e.getValue()).getValue("value")));
    }
    return values;
  }

  /**
   * A run under way on this node: the transaction and the attempt it runs. After a takeover a node may hold the
   * same transaction again, at a later attempt, while its old run has not ended yet: that later one is not run.
   */
  public record Running(String txId, long attempt) {
  }

  /**
   * Puts back what this node holds in inflightZ (of every partition) but is not running; answers how many
   * went back.
   */
  public Future<Integer> requeueLost(String nodeId, Collection<Running> running) {
    return requeueLost(nodeId, running, false);
  }

  /**
   * As requeueLost; stopping says the node stops: everything it holds goes back, and the runs in running (whose
   * step may have been called) are marked takenOver, as a dead node's (a step declared not idempotent then ends
   * maybe-ran); what it held but never ran is not.
   */
  public Future<Integer> requeueLost(String nodeId, Collection<Running> running, boolean stopping) {
    return requeueLost(nodeId, running, stopping, keys.all());
  }

  /** As requeueLost, in the given partitions only. */
  public Future<Integer> requeueLost(String nodeId, Collection<Running> running, boolean stopping,
                                     List<Integer> partitions) {
    List<Future<Integer>> each = new ArrayList<>();
    for (int p : partitions) {
      List<String> args = new ArrayList<>(6 + 2 * running.size());
      args.addAll(List.of(r.now(), keys.stateH(p, ""), keys.qInZ(p, ""), keys.qRingL(p, ""), nodeId,
          stopping ? "1" : "0"));
      running.stream().filter(run -> keys.partitionOf(run.txId()) == p).forEach(run -> {
        args.add(run.txId());
        args.add(Long.toString(run.attempt()));
      });
      each.add(r.run(r.scripts().requeue, List.of(keys.inflightZ(p, nodeId), keys.processingZ(p)), args)
          .map(Response::toInteger));
    }
    return Future.all(each).map(all -> {
      int n = 0;
      for (int i = 0; i < all.size(); i++) {
        n += all.<Integer>resultAt(i);
      }
      return n;
    });
  }

  /** Puts a wake-up token on a group's ring (a node that took one but cannot use it hands it on). */
  public Future<Void> ring(int p, String group) {
    return r.send(Request.cmd(Command.RPUSH).arg(keys.qRingL(p, group)).arg("1")).mapEmpty();
  }

  /** Rings a group in a partition (ring.lua): a token, and a publish for nodes that listen by subscription. */
  public Future<Void> ringAll(int p, String group) {
    return r.run(r.scripts().ring, List.of(keys.qRingL(p, group)), List.of()).mapEmpty();
  }

  /** Takes a start token from an owner's bucket: 0 when taken, else the milliseconds until one is there. */
  public Future<Long> takeStartToken(String owner, int perSecond, int burst) {
    return r.run(r.scripts().rate, List.of(keys.rateH(owner)),
            List.of(r.now(), Integer.toString(perSecond), Integer.toString(burst)))
        .map(reply -> reply.get(0).toInteger() == 1 ? 0L : Math.max(1L, reply.get(1).toLong()));
  }
}
