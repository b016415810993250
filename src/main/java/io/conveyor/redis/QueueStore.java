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
public final class QueueStore {
  private final StoreContext r;
  private final Keys keys;

  public QueueStore(StoreContext r) {
    this.r = r;
    this.keys = r.keys();
  }

  /** One transaction to start: its new txId, the request, and the group its pipeline is believed to be in. */
  public record NewTx(String txId, StartRequest req, String group, Duration webhookDelay) {
    public NewTx(String txId, StartRequest req, String group) {
      this(txId, req, group, Duration.ZERO);
    }
  }

  /** Reply of start.lua for one transaction: code plus a detail (version, group or existing txId), and its time. */
  public record StartReply(Code code, String detail, long created) {
  }

  /** Starts one transaction. */
  public Future<StartReply> start(NewTx tx, Duration externalIdPeriod) {
    return start(List.of(tx), externalIdPeriod).map(replies -> replies.get(0));
  }

  /** Starts a batch of transactions in one script call; each answer stands on its own. */
  public Future<List<StartReply>> start(List<NewTx> txs, Duration externalIdPeriod) {
    long now = r.clock().millis();
    List<String> k = new ArrayList<>(3 + 5 * txs.size());
    k.addAll(keys.statsKeys(now));
    List<String> args = new ArrayList<>(2 + 11 * txs.size());
    args.add(Long.toString(now));
    args.add(Long.toString(externalIdPeriod.toMillis()));
    for (NewTx tx : txs) {
      StartRequest req = tx.req();
      String state = keys.stateH(tx.txId());
      boolean webhook = req.webhook() != null;
      k.addAll(List.of(state, keys.pipelineH(req.type()), keys.qInL(tx.group()), keys.qRingL(tx.group()),
          req.externalId() == null ? state : keys.externalId(req.owner(), req.externalId())));
      args.addAll(List.of(tx.txId(), req.owner(), req.type(), req.externalId() == null ? "" : req.externalId(),
          req.metadataJson(), req.inputJson(), tx.group(), webhook ? req.webhook() : "",
          webhook ? WebhookUrl.hash(req.webhook()) : "", webhook ? Long.toString(tx.webhookDelay().toMillis()) : "",
          webhook && Boolean.TRUE.equals(req.metadata().getValue("progressReports")) ? "1" : ""));
    }
    return r.run(r.scripts().start, k, args).map(reply -> {
      List<StartReply> out = new ArrayList<>(reply.size());
      for (Response one : reply) {
        out.add(new StartReply(Code.of(one), one.get(1).toString(), now));
      }
      return out;
    });
  }

  /** Takes up to max transactions of a group for this node, admin first, then out, then in. */
  public Future<List<Dequeued>> dequeue(String group, String nodeId, int max) {
    long now = r.clock().millis();
    List<String> k = new ArrayList<>(List.of(keys.qAdminL(group), keys.qOutL(group), keys.qInL(group),
        keys.processingZ(), keys.inflightZ(nodeId), keys.qRingL(group)));
    k.addAll(keys.statsKeys(now));
    return r.run(r.scripts().dequeue, k, List.of(Integer.toString(max), nodeId, Long.toString(now), keys.stateH(""),
        group)).map(QueueStore::dequeued);
  }

  /** Each entry on its own: the script has taken them all, so one bad state must not hide the others. */
  private static List<Dequeued> dequeued(Response reply) {
    List<Dequeued> out = new ArrayList<>(reply.size());
    for (Response e : reply) {
      String txId = str(e.get(0));
      long attempt = e.get(1).toLong();
      try {
        String childStatus = emptyToNull(str(e.get(11)));
        Dequeued.ChildResult child = childStatus == null ? null : new Dequeued.ChildResult(
            TxStatus.fromWire(childStatus), json(e.get(12)), emptyToNull(str(e.get(13))));
        out.add(new Dequeued(txId, attempt, str(e.get(2)), str(e.get(3)), Integer.parseInt(str(e.get(4))),
            json(e.get(5)), str(e.get(6)), emptyToNull(str(e.get(7))), json(e.get(8)),
            Long.parseLong(str(e.get(9))), str(e.get(10)), child, Integer.parseInt(str(e.get(14))),
            switchValues(json(e.get(15))), null));
      } catch (RuntimeException bad) {
        out.add(Dequeued.unreadable(txId, attempt, bad.toString()));
      }
    }
    return out;
  }

  /** {name: {value, seq}} as stored, to {name: value} as a step sees it. */
  private static JsonObject switchValues(JsonObject stored) {
    JsonObject values = new JsonObject();
    if (stored != null) {
      stored.forEach(e -> values.put(e.getKey(), ((JsonObject) e.getValue()).getValue("value")));
    }
    return values;
  }

  /** Puts back what this node holds in inflightZ but is not running; answers how many went back. */
  public Future<Integer> requeueLost(String nodeId, Collection<String> running) {
    List<String> args = new ArrayList<>(5 + running.size());
    args.addAll(List.of(r.now(), keys.stateH(""), keys.qInL(""), keys.qRingL(""), nodeId));
    args.addAll(running);
    return r.run(r.scripts().requeue, List.of(keys.inflightZ(nodeId), keys.processingZ()), args)
        .map(Response::toInteger);
  }

  /** Puts a wake-up token on a group's ring (a node that took one but cannot use it hands it on). */
  public Future<Void> ring(String group) {
    return r.send(Request.cmd(Command.RPUSH).arg(keys.qRingL(group)).arg("1")).mapEmpty();
  }

  /** Takes a start token from an owner's bucket: 0 when taken, else the milliseconds until one is there. */
  public Future<Long> takeStartToken(String owner, int perSecond, int burst) {
    return r.run(r.scripts().rate, List.of(keys.rateH(owner)),
            List.of(r.now(), Integer.toString(perSecond), Integer.toString(burst)))
        .map(reply -> reply.get(0).toInteger() == 1 ? 0L : Math.max(1L, reply.get(1).toLong()));
  }
}
