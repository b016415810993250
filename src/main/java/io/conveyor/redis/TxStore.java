package io.conveyor.redis;

import io.conveyor.model.Dequeued;
import io.conveyor.model.StartRequest;
import io.conveyor.model.TxException;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** One typed method per Lua script; "now" always comes from the injected clock. */
public final class TxStore {
  private final RedisLink link;
  private final Keys keys;
  private final Scripts scripts;
  private final Clock clock;

  public TxStore(RedisLink link, Keys keys, Scripts scripts, Clock clock) {
    this.link = link;
    this.keys = keys;
    this.scripts = scripts;
    this.clock = clock;
  }

  public Keys keys() {
    return keys;
  }

  public RedisLink link() {
    return link;
  }

  private String now() {
    return Long.toString(clock.millis());
  }

  /** Reply of start.lua for one transaction: code plus a detail (version, group or existing txId), and its time. */
  public record StartReply(String code, String detail, long created) {
  }

  /** One transaction to start: its new txId, the request, and the group its pipeline is believed to be in. */
  public record NewTx(String txId, StartRequest req, String group, Duration webhookDelay) {
    public NewTx(String txId, StartRequest req, String group) {
      this(txId, req, group, Duration.ZERO);
    }
  }

  /** Starts one transaction. */
  public Future<StartReply> start(String txId, StartRequest req, String group, Duration externalIdPeriod) {
    return start(List.of(new NewTx(txId, req, group)), externalIdPeriod).map(r -> r.get(0));
  }

  /** Starts a batch of transactions in one script call; each answer stands on its own. */
  public Future<List<StartReply>> start(List<NewTx> txs, Duration externalIdPeriod) {
    List<String> k = new ArrayList<>(5 * txs.size());
    long now = clock.millis();
    List<String> args = new ArrayList<>(2 + 11 * txs.size());
    args.add(Long.toString(now));
    args.add(Long.toString(externalIdPeriod.toMillis()));
    args.add(keys.prefix());
    for (NewTx tx : txs) {
      StartRequest req = tx.req();
      String state = keys.stateH(tx.txId());
      k.add(state);
      k.add(keys.pipelineH(req.type()));
      k.add(keys.qInL(tx.group()));
      k.add(keys.qRingL(tx.group()));
      k.add(req.externalId() == null ? state : keys.externalId(req.owner(), req.externalId()));
      args.addAll(List.of(tx.txId(), req.owner(), req.type(), req.externalId() == null ? "" : req.externalId(),
          req.metadataJson(), req.inputJson(), tx.group(), req.webhook() == null ? "" : req.webhook(),
          req.webhook() == null ? "" : io.conveyor.model.WebhookUrl.hash(req.webhook()),
          req.webhook() == null ? "" : Long.toString(tx.webhookDelay().toMillis()),
          req.webhook() != null && Boolean.TRUE.equals(req.metadata().getValue("progressReports")) ? "1" : ""));
    }
    return Scripts.run(link, scripts.start, k, args).map(reply -> {
      List<StartReply> out = new ArrayList<>(reply.size());
      for (Response r : reply) {
        out.add(new StartReply(r.get(0).toString(), r.get(1).toString(), now));
      }
      return out;
    });
  }

  /** Takes up to max transactions of a group for this node, admin first, then out, then in. */
  public Future<List<Dequeued>> dequeue(String group, String nodeId, int max) {
    List<String> k = List.of(keys.qAdminL(group), keys.qOutL(group), keys.qInL(group), keys.processingZ(),
        keys.inflightZ(nodeId), keys.qRingL(group));
    return Scripts.run(link, scripts.dequeue, k, List.of(Integer.toString(max), nodeId, now(), keys.prefix(), group))
        .map(TxStore::dequeued);
  }

  /** Each entry on its own: the script has taken them all, so one bad state must not hide the others. */
  private static List<Dequeued> dequeued(Response reply) {
    List<Dequeued> out = new ArrayList<>(reply.size());
    for (Response r : reply) {
      String txId = str(r.get(0));
      long attempt = r.get(1).toLong();
      try {
        String childStatus = emptyToNull(str(r.get(11)));
        Dequeued.ChildResult child = childStatus == null ? null : new Dequeued.ChildResult(
            TxStatus.fromWire(childStatus), json(r.get(12)), emptyToNull(str(r.get(13))));
        out.add(new Dequeued(txId, attempt, str(r.get(2)), str(r.get(3)), Integer.parseInt(str(r.get(4))),
            json(r.get(5)), str(r.get(6)), emptyToNull(str(r.get(7))), json(r.get(8)),
            Long.parseLong(str(r.get(9))), str(r.get(10)), child, Integer.parseInt(str(r.get(14))),
            switchValues(json(r.get(15))), null));
      } catch (RuntimeException e) {
        out.add(Dequeued.unreadable(txId, attempt, e.toString()));
      }
    }
    return out;
  }

  /** Reply of hop.lua: code plus a detail (the child's version, or the group it really belongs to). */
  public record HopReply(String code, String detail) {
  }

  /** Queues a child pipeline in its group and lets the parent (run by this node) wait for it. */
  public Future<HopReply> hop(Dequeued parent, String nodeId, int step, String childTxId, String childType,
                              JsonObject input, String childGroup) {
    List<String> k = List.of(keys.stateH(parent.txId()), keys.stateH(childTxId), keys.pipelineH(childType),
        keys.qInL(childGroup), keys.qRingL(childGroup), keys.processingZ(), keys.inflightZ(nodeId));
    List<String> args = List.of(parent.txId(), Long.toString(parent.attempt()), Integer.toString(step), childTxId,
        childType, input.encode(), now(), childGroup, keys.prefix());
    return Scripts.run(link, scripts.hop, k, args)
        .map(r -> new HopReply(r.get(0).toString(), r.size() > 1 ? r.get(1).toString() : null));
  }

  /** Reply of cancel.lua: CANCELLED, CANCEL_REQUESTED, ALREADY_FINAL (with the status) or NOT_FOUND. */
  public record CancelReply(String code, String detail) {
  }

  /** Cancels one of an owner's transactions (see cancel.lua). */
  public Future<CancelReply> cancel(String txId, String owner, Duration archiveDelay) {
    return Scripts.run(link, scripts.cancel, List.of(keys.stateH(txId), keys.toArchiveZ(), keys.notifyChannel(),
            keys.sleepingZ()),
            List.of(txId, owner, now(), Long.toString(archiveDelay.toMillis()), keys.prefix()))
        .map(r -> new CancelReply(r.get(0).toString(), r.size() > 1 ? r.get(1).toString() : null));
  }

  /** True when the caller leads the role (it took or renewed the lease); see lease.lua. */
  public Future<Boolean> lease(String role, String nodeId, Duration lease, Duration grace) {
    return Scripts.run(link, scripts.lease, List.of(keys.lock1(role), keys.lock2(role)),
        List.of(nodeId, Long.toString(lease.toMillis()), Long.toString(grace.toMillis())))
        .map(r -> r.toInteger() == 1);
  }

  /** Frees a role's lease if one of the given (departed) nodes holds it; true when it did. */
  public Future<Boolean> breakLease(String role, java.util.Collection<String> gone) {
    return Scripts.run(link, scripts.leaseBreak, List.of(keys.lock1(role), keys.lock2(role)), List.copyOf(gone))
        .map(r -> r.toInteger() == 1);
  }

  /** Writes this node's heartbeat (and registers it in nodesZ the first time). */
  public Future<Void> heartbeat(String nodeId, JsonObject info, Duration ttl) {
    return Scripts.run(link, scripts.heartbeat, List.of(keys.heartbeat(nodeId), keys.nodesZ()),
        List.of(nodeId, info.encode(), Long.toString(ttl.toMillis()), now())).mapEmpty();
  }

  /** Removes this node's heartbeat and registration: it leaves on purpose, with nothing in flight. */
  public Future<Void> leave(String nodeId) {
    return link.send(Request.cmd(Command.DEL).arg(keys.heartbeat(nodeId)))
        .compose(r -> link.send(Request.cmd(Command.ZREM).arg(keys.nodesZ()).arg(nodeId))).mapEmpty();
  }

  /**
   * Takes over dead nodes (and those named) and clears processingZ entries older than staleAfter that have
   * no live owner; answers nodeId → transactions put back on a queue, and "garbage" → entries cleared.
   */
  public Future<java.util.Map<String, Integer>> reap(java.util.Collection<String> forced, Duration staleAfter) {
    List<String> args = new ArrayList<>(List.of(now(), keys.prefix(), Long.toString(staleAfter.toMillis())));
    args.addAll(forced);
    return Scripts.run(link, scripts.reap, List.of(keys.nodesZ(), keys.processingZ(), keys.eventsL(),
            keys.exceptionZ()), args)
        .map(r -> {
          java.util.Map<String, Integer> out = new java.util.LinkedHashMap<>();
          for (int i = 0; i + 1 < r.size(); i += 2) {
            out.put(r.get(i).toString(), r.get(i + 1).toInteger());
          }
          return out;
        });
  }

  /** The heartbeat info of every registered node whose heartbeat is still there. */
  public Future<java.util.Map<String, JsonObject>> nodes() {
    return link.send(Request.cmd(Command.ZRANGE).arg(keys.nodesZ()).arg(0).arg(-1)).compose(ids -> {
      if (ids.size() == 0) {
        return Future.succeededFuture(java.util.Map.of());
      }
      Request mget = Request.cmd(Command.MGET);
      ids.forEach(id -> mget.arg(keys.heartbeat(id.toString())));
      return link.send(mget).map(infos -> {
        java.util.Map<String, JsonObject> out = new java.util.LinkedHashMap<>();
        for (int i = 0; i < ids.size(); i++) {
          if (infos.get(i) != null) {
            out.put(ids.get(i).toString(), new JsonObject(infos.get(i).toString()));
          }
        }
        return out;
      });
    });
  }

  /** {name: {value, seq}} as stored, to {name: value} as a step sees it. */
  private static JsonObject switchValues(JsonObject stored) {
    JsonObject values = new JsonObject();
    if (stored != null) {
      stored.forEach(e -> values.put(e.getKey(), ((JsonObject) e.getValue()).getValue("value")));
    }
    return values;
  }

  /** Lets a running transaction sleep until wakeAt or its switch changes; SLEEPING, REQUEUED or FENCED. */
  public Future<String> sleep(Dequeued tx, String nodeId, String group, long wakeAt, String switchName) {
    List<String> k = List.of(keys.stateH(tx.txId()), keys.sleepingZ(), keys.processingZ(), keys.inflightZ(nodeId),
        keys.qInL(group), keys.qRingL(group));
    return Scripts.run(link, scripts.sleep, k, List.of(tx.txId(), Long.toString(tx.attempt()), Long.toString(wakeAt),
        switchName == null ? "" : switchName, now())).map(r -> r.get(0).toString());
  }

  /** Sets a switch on an owner's transaction: SET, ALREADY_FINAL or NOT_FOUND (see set-switch.lua). */
  public Future<String> setSwitch(String txId, String owner, String name, Object value) {
    return Scripts.run(link, scripts.setSwitch, List.of(keys.stateH(txId), keys.sleepingZ()),
        List.of(txId, owner, name, io.vertx.core.json.Json.encode(value), now(), keys.prefix()))
        .map(r -> r.get(0).toString());
  }

  /** Queues up to max sleepers whose time has come; answers how many. */
  public Future<Integer> wake(int max) {
    return Scripts.run(link, scripts.wake, List.of(keys.sleepingZ()), List.of(now(), Integer.toString(max),
        keys.prefix())).map(Response::toInteger);
  }

  /** The txId an owner's externalId names (while its uniqueness period lasts), or null. */
  public Future<String> txIdForExternalId(String owner, String externalId) {
    return link.send(Request.cmd(Command.GET).arg(keys.externalId(owner, externalId))).map(TxStore::str);
  }

  /** Takes a start token from an owner's bucket: 0 when taken, else the milliseconds until one is there. */
  public Future<Long> takeStartToken(String owner, int perSecond, int burst) {
    return Scripts.run(link, scripts.rate, List.of(keys.rateH(owner)),
        List.of(now(), Integer.toString(perSecond), Integer.toString(burst)))
        .map(r -> r.get(0).toInteger() == 1 ? 0L : Math.max(1L, r.get(1).toLong()));
  }

  /** Every pipeline's current version: {name: {version, nodeGroup, transactionType, definition}}. */
  public Future<JsonObject> pipelines() {
    return link.send(Request.cmd(Command.SMEMBERS).arg(keys.pipelinesS())).compose(names -> {
      List<String> sorted = new ArrayList<>();
      names.forEach(n -> sorted.add(n.toString()));
      java.util.Collections.sort(sorted);
      List<Future<Response>> reads = new ArrayList<>();
      for (String n : sorted) {
        reads.add(link.send(Request.cmd(Command.HMGET).arg(keys.pipelineH(n)).arg("version").arg("nodeGroup")
            .arg("isTransactionType").arg("definition")));
      }
      return Future.all(reads).map(all -> {
        JsonObject out = new JsonObject();
        for (int i = 0; i < sorted.size(); i++) {
          Response r = all.resultAt(i);
          if (r.get(0) != null) {
            out.put(sorted.get(i), new JsonObject().put("version", str(r.get(0))).put("nodeGroup", str(r.get(1)))
                .put("transactionType", "1".equals(str(r.get(2)))).put("definition", new JsonObject(str(r.get(3)))));
          }
        }
        return out;
      });
    });
  }

  /** Queue lengths of a group: {in, out, admin}. */
  public Future<JsonObject> queueLengths(String group) {
    return Future.all(link.send(Request.cmd(Command.LLEN).arg(keys.qInL(group))),
            link.send(Request.cmd(Command.LLEN).arg(keys.qOutL(group))),
            link.send(Request.cmd(Command.LLEN).arg(keys.qAdminL(group))))
        .map(f -> new JsonObject().put("in", f.<Response>resultAt(0).toLong())
            .put("out", f.<Response>resultAt(1).toLong()).put("admin", f.<Response>resultAt(2).toLong()));
  }

  /** The nodeId holding a role's lease, or null. */
  public Future<String> leader(String role) {
    return link.send(Request.cmd(Command.GET).arg(keys.lock1(role))).map(TxStore::str);
  }

  /** How many of these scripts Redis has loaded. */
  public Future<Integer> scriptsLoaded(List<LuaScript> all) {
    Request r = Request.cmd(Command.SCRIPT).arg("EXISTS");
    all.forEach(s -> r.arg(s.sha()));
    return link.send(r).map(reply -> {
      int n = 0;
      for (Response x : reply) {
        n += x.toInteger();
      }
      return n;
    });
  }

  /** Answers when Redis does: readiness. */
  public Future<Void> ping() {
    return link.send(Request.cmd(Command.PING)).mapEmpty();
  }

  /** Puts back what this node holds in inflightZ but is not running; answers how many went back. */
  public Future<Integer> requeueLost(String nodeId, java.util.Collection<String> running) {
    List<String> args = new ArrayList<>(2 + running.size());
    args.add(now());
    args.add(keys.prefix());
    args.addAll(running);
    return Scripts.run(link, scripts.requeue, List.of(keys.inflightZ(nodeId), keys.processingZ()), args)
        .map(Response::toInteger);
  }

  /** Puts a wake-up token on a group's ring (a node that took one but cannot use it hands it on). */
  public Future<Void> ring(String group) {
    return link.send(Request.cmd(Command.RPUSH).arg(keys.qRingL(group)).arg("1")).mapEmpty();
  }

  public Future<WriteOutcome> checkpoint(String txId, long attempt, int nextStep, JsonObject data) {
    return checkpoint(txId, attempt, nextStep, data, null);
  }

  /** The same, recording the step just run as "step:startMs:durationMs" in stepTimes. */
  public Future<WriteOutcome> checkpoint(String txId, long attempt, int nextStep, JsonObject data, String stepTime) {
    return Scripts.run(link, scripts.checkpoint, List.of(keys.stateH(txId)),
            List.of(Long.toString(attempt), Integer.toString(nextStep), data.encode(), now(),
                stepTime == null ? "" : stepTime))
        .map(TxStore::outcome);
  }

  /** One transaction to complete, fenced by the attempt this node was given. */
  public record Completion(String txId, long attempt, TxStatus status, JsonObject output, String note,
                           String stepTime) {
    public Completion(String txId, long attempt, TxStatus status, JsonObject output, String note) {
      this(txId, attempt, status, output, note, null);
    }
  }

  /** Completes a batch of transactions this node runs, in one script call; each answer stands on its own. */
  public Future<List<WriteOutcome>> complete(String nodeId, Duration archiveDelay, List<Completion> txs) {
    List<String> k = new ArrayList<>(4 + txs.size());
    List<String> args = new ArrayList<>(3 + 6 * txs.size());
    k.addAll(List.of(keys.processingZ(), keys.inflightZ(nodeId), keys.toArchiveZ(), keys.notifyChannel()));
    args.add(now());
    args.add(Long.toString(archiveDelay.toMillis()));
    args.add(keys.prefix());
    for (Completion c : txs) {
      k.add(keys.stateH(c.txId()));
      args.addAll(List.of(c.txId(), Long.toString(c.attempt()), c.status().wire(),
          c.output() == null ? "" : c.output().encode(), c.note() == null ? "" : c.note(),
          c.stepTime() == null ? "" : c.stepTime()));
    }
    return Scripts.run(link, scripts.complete, k, args).map(reply -> {
      List<WriteOutcome> out = new ArrayList<>(reply.size());
      reply.forEach(r -> out.add(WriteOutcome.valueOf(r.toString())));
      return out;
    });
  }

  private static WriteOutcome outcome(Response r) {
    return WriteOutcome.valueOf(r.get(0).toString());
  }

  /** The summary of a transaction, or null when Redis has none. */
  public Future<TxSummary> getState(String txId) {
    return Scripts.run(link, scripts.getState, List.of(keys.stateH(txId), keys.webhookH(txId)), List.of())
        .map(r -> r.size() == 0 ? null : summary(txId, r));
  }

  /** The fields get-state.lua reads, in its order. */
  private static final List<String> STATE_FIELDS = List.of("owner", "externalId", "type", "version", "status",
      "processingState", "attempt", "created", "updated", "completed", "output", "note", "progress", "metadata",
      "step", "webhookUrl", "webhook");

  private static TxSummary summary(String txId, Response r) {
    JsonObject pending = pendingWebhook(str(r.get(STATE_FIELDS.size())), r, STATE_FIELDS.size() + 1);
    if (pending != null) {
      pending.put("url", str(r.get(STATE_FIELDS.indexOf("webhookUrl"))));
    }
    return TxSummary.fromState(txId, name -> name.equals("webhook") && pending != null ? pending.encode()
        : str(r.get(STATE_FIELDS.indexOf(name))));
  }

  /**
   * A delivery still under way, as the stored webhook state (times in ms): from webhookH fields status,
   * attempts, lastError, lastCode, nextAttempt, lastAttempt (from index from of the reply), or null.
   */
  static JsonObject pendingWebhook(String status, Response r, int from) {
    if (status == null) {
      return null;
    }
    JsonObject w = new JsonObject().put("status", status).put("attempts", Integer.parseInt(str(r.get(from))));
    String[] names = {"lastError", "lastCode", "nextAttempt", "lastAttempt"};
    for (int i = 0; i < names.length; i++) {
      String v = str(r.get(from + 1 + i));
      if (v != null && !v.isEmpty()) {
        w.put(names[i], i == 0 ? v : Long.parseLong(v));
      }
    }
    return w;
  }

  /** The delivery state of a transaction's completion webhook while it goes on, or null (see get-state.lua). */
  public Future<JsonObject> webhookState(String txId, String url) {
    return link.send(Request.cmd(Command.HMGET).arg(keys.webhookH(txId)).arg("status").arg("attempts")
        .arg("lastError").arg("lastCode").arg("nextAttempt").arg("lastAttempt"))
        .map(r -> {
          JsonObject w = pendingWebhook(str(r.get(0)), r, 1);
          return w == null ? null : w.put("url", url);
        });
  }

  /** A transaction handed out for archiving: its stored fields, and the stamp that confirms it. */
  public record ToArchive(String txId, String stamp, JsonObject fields) {
  }

  /** What archive.lua answered: whether the caller leads, how many it confirmed, and the next batch. */
  public record ArchiveBatch(boolean leader, int confirmed, List<ToArchive> batch) {
  }

  /**
   * Confirms what the caller wrote to the archive (deleting it from Redis), then, if the caller leads the
   * archive role, takes up to max due transactions (see archive.lua).
   */
  public Future<ArchiveBatch> archiveBatch(String nodeId, List<ToArchive> written, int max, Duration lease,
                                           Duration grace) {
    List<String> args = new ArrayList<>(6 + 2 * written.size());
    args.addAll(List.of(nodeId, now(), Integer.toString(max), Long.toString(lease.toMillis()),
        Long.toString(grace.toMillis()), keys.prefix()));
    for (ToArchive t : written) {
      args.add(t.txId());
      args.add(t.stamp());
    }
    return Scripts.run(link, scripts.archive, List.of(keys.toArchiveZ(), keys.lock1(ARCHIVE_ROLE),
        keys.lock2(ARCHIVE_ROLE), keys.exceptionZ()), args).map(r -> {
          List<ToArchive> batch = new ArrayList<>((r.size() - 2) / 3);
          for (int i = 2; i + 2 < r.size(); i += 3) {
            Response flat = r.get(i + 2);
            JsonObject fields = new JsonObject();
            for (int f = 0; f + 1 < flat.size(); f += 2) {
              fields.put(flat.get(f).toString(), flat.get(f + 1).toString());
            }
            batch.add(new ToArchive(r.get(i).toString(), r.get(i + 1).toString(), fields));
          }
          return new ArchiveBatch(r.get(0).toInteger() == 1, r.get(1).toInteger(), batch);
        });
  }

  /** A delivery's result, reported in the next webhook.lua call. */
  public record WebhookResult(String webhookId, String outcome, int attempt, Integer code, String error, long next) {
  }

  /** A delivery handed out: deliver (POST it) or sync (write its final state to the archive). */
  public record WebhookJob(String kind, String webhookId, JsonObject event, TxSummary summary) {
  }

  /** What webhook.lua answered: whether the caller leads, and the deliveries handed out. */
  public record WebhookBatch(boolean leader, List<WebhookJob> jobs) {
  }

  /** The webhook settings webhook.lua needs, in milliseconds. */
  public record WebhookLimits(Duration lease, Duration grace, Duration lostAfter, int failureLimit,
                              Duration failureWindow, Duration pause) {
  }

  /** Records results and, if the caller leads the webhook role, hands out up to max due deliveries. */
  public Future<WebhookBatch> webhookBatch(String nodeId, List<WebhookResult> results, int max, WebhookLimits l) {
    List<String> args = new ArrayList<>(10 + 6 * results.size());
    args.addAll(List.of(nodeId, now(), Integer.toString(max), Long.toString(l.lease().toMillis()),
        Long.toString(l.grace().toMillis()), keys.prefix(), Long.toString(l.lostAfter().toMillis()),
        Integer.toString(l.failureLimit()), Long.toString(l.failureWindow().toMillis()),
        Long.toString(l.pause().toMillis())));
    for (WebhookResult r : results) {
      args.addAll(List.of(r.webhookId(), r.outcome(), Integer.toString(r.attempt()),
          r.code() == null ? "" : r.code().toString(), r.error() == null ? "" : r.error(),
          r.outcome().equals("retry") ? Long.toString(r.next()) : ""));
    }
    return Scripts.run(link, scripts.webhook, List.of(keys.webhooksZ(), keys.lock1(WEBHOOK_ROLE),
        keys.lock2(WEBHOOK_ROLE), keys.eventsL()), args).map(r -> {
          List<WebhookJob> jobs = new ArrayList<>(r.size() - 1);
          for (int i = 1; i < r.size(); i++) {
            Response job = r.get(i);
            JsonObject event = new JsonObject();
            Response flat = job.get(2);
            for (int f = 0; f + 1 < flat.size(); f += 2) {
              event.put(flat.get(f).toString(), flat.get(f + 1).toString());
            }
            Response fields = job.get(3);
            TxSummary summary = fields.size() == 0 ? null : TxSummary.fromState(event.getString("txId"),
                name -> {
                  int at = STATE_FIELDS.indexOf(name);
                  return at < 0 || at >= fields.size() ? null : str(fields.get(at));
                });
            jobs.add(new WebhookJob(job.get(0).toString(), job.get(1).toString(), event, summary));
          }
          return new WebhookBatch(r.get(0).toInteger() == 1, jobs);
        });
  }

  /** The lease keys of the webhook role are webhookLock1 and webhookLock2. */
  public static final String WEBHOOK_ROLE = "webhook";

  /** Records a running step's progress report (fenced by attempt): OK, NOT_FOUND or FENCED. */
  public Future<String> progress(String txId, long attempt, JsonObject report) {
    return Scripts.run(link, scripts.progress, List.of(keys.stateH(txId), keys.webhooksZ(), keys.notifyChannel()),
        List.of(txId, Long.toString(attempt), report.encode(), now(), keys.prefix())).map(r -> r.get(0).toString());
  }

  /** Samples queue lengths of these groups into the stats (see sample.lua). */
  public Future<Integer> sampleQueues(java.util.Collection<String> groups) {
    List<String> args = new ArrayList<>(List.of(now(), keys.prefix()));
    args.addAll(groups);
    return Scripts.run(link, scripts.sample, List.of(keys.processingZ(), keys.sleepingZ()), args)
        .map(Response::toInteger);
  }

  /** The stats hashes of a series (1, 2 or 3) for these slot starts, in order; an empty object for none. */
  public Future<List<JsonObject>> stats(int series, List<Long> slots) {
    List<Future<Response>> reads = new ArrayList<>(slots.size());
    for (long slot : slots) {
      reads.add(link.send(Request.cmd(Command.HGETALL).arg(keys.prefix() + "stats" + series + "H:" + slot)));
    }
    return Future.all(reads).map(all -> {
      List<JsonObject> out = new ArrayList<>(slots.size());
      for (int i = 0; i < slots.size(); i++) {
        Response r = all.resultAt(i);
        JsonObject h = new JsonObject();
        if (r != null && r.size() > 0) {
          hashReply(r, (k, v) -> h.put(k, v.toLong()));
        }
        out.add(h);
      }
      return out;
    });
  }

  /** Lists an operator can look at: which sorted set holds them, newest first or oldest first. */
  public enum AdminList { INPLAY, SLEEPING, EXCEPTIONS, RECENT }

  /** Up to limit transactions of a list: {txId, at (the set's score), owner, type, status, processingState}. */
  public Future<io.vertx.core.json.JsonArray> adminList(AdminList list, int limit) {
    String key = switch (list) {
      case INPLAY -> keys.processingZ();
      case SLEEPING -> keys.sleepingZ();
      case EXCEPTIONS -> keys.exceptionZ();
      case RECENT -> keys.toArchiveZ();
    };
    boolean newestFirst = list == AdminList.EXCEPTIONS || list == AdminList.RECENT;
    Request range = Request.cmd(Command.ZRANGE).arg(key).arg(0).arg(limit - 1);
    if (newestFirst) {
      range.arg("REV");
    }
    range.arg("WITHSCORES");
    return link.send(range).compose(r -> {
      List<String> ids = new ArrayList<>();
      List<Long> scores = new ArrayList<>();
      for (int i = 0; i < r.size(); i++) {
        Response e = r.get(i);
        if (e.type() == io.vertx.redis.client.ResponseType.MULTI) {
          ids.add(e.get(0).toString());
          scores.add((long) Double.parseDouble(e.get(1).toString()));
        } else if (i + 1 < r.size()) {
          ids.add(e.toString());
          scores.add((long) Double.parseDouble(r.get(++i).toString()));
        }
      }
      List<Future<Response>> reads = new ArrayList<>();
      for (String id : ids) {
        reads.add(link.send(Request.cmd(Command.HMGET).arg(keys.stateH(id)).arg("owner").arg("type").arg("status")
            .arg("processingState").arg("completed")));
      }
      return Future.all(reads).map(all -> {
        io.vertx.core.json.JsonArray out = new io.vertx.core.json.JsonArray();
        for (int i = 0; i < ids.size(); i++) {
          Response h = all.resultAt(i);
          out.add(new JsonObject().put("txId", ids.get(i))
              .put("at", java.time.Instant.ofEpochMilli(scores.get(i)).toString())
              .put("owner", str(h.get(0))).put("type", str(h.get(1))).put("status", str(h.get(2)))
              .put("processingState", str(h.get(3))));
        }
        return out;
      });
    });
  }

  /** The owner of a transaction Redis holds, or null. */
  public Future<String> ownerOf(String txId) {
    return link.send(Request.cmd(Command.HGET).arg(keys.stateH(txId)).arg("owner")).map(TxStore::str);
  }

  /** Every field of a transaction's state as Redis holds it, or null. */
  public Future<JsonObject> rawState(String txId) {
    return link.send(Request.cmd(Command.HGETALL).arg(keys.stateH(txId))).map(r -> {
      if (r == null || r.size() == 0) {
        return null;
      }
      JsonObject fields = new JsonObject();
      hashReply(r, (k, v) -> fields.put(k, v.toString()));
      return fields;
    });
  }

  /** Operational events (eventsL) that name this transaction, newest first, up to 50 looked at 1000. */
  public Future<io.vertx.core.json.JsonArray> eventsAbout(String txId) {
    return link.send(Request.cmd(Command.LRANGE).arg(keys.eventsL()).arg(0).arg(999)).map(r -> {
      io.vertx.core.json.JsonArray out = new io.vertx.core.json.JsonArray();
      for (Response e : r) {
        String text = e.toString();
        if (text.contains(txId) && out.size() < 50) {
          try {
            out.add(new JsonObject(text));
          } catch (RuntimeException notJson) {
            out.add(new JsonObject().put("text", text));
          }
        }
      }
      return out;
    });
  }

  /** Moves a sleeping transaction's wake time to now (the reaper leader queues it at its next round). */
  public Future<Boolean> wakeNow(String txId) {
    return link.send(Request.cmd(Command.ZADD).arg(keys.sleepingZ()).arg("XX").arg("CH").arg(now()).arg(txId))
        .map(r -> r.toInteger() == 1 || r.toInteger() == 0)
        .compose(changed -> link.send(Request.cmd(Command.ZSCORE).arg(keys.sleepingZ()).arg(txId))
            .map(score -> score != null));
  }

  /** Each field and value of a hash reply, as RESP3 gives it (a map) or RESP2 (a flat list). */
  private static void hashReply(Response r, java.util.function.BiConsumer<String, Response> each) {
    java.util.Set<String> names;
    try {
      names = r.getKeys();
    } catch (RuntimeException e) {
      names = null;
    }
    if (names != null && !names.isEmpty()) {
      names.forEach(k -> each.accept(k, r.get(k)));
    } else {
      for (int f = 0; f + 1 < r.size(); f += 2) {
        each.accept(r.get(f).toString(), r.get(f + 1));
      }
    }
  }

  /** Cancels a transaction's completion webhook after a long-poll reply: CANCELLED, TOO_LATE or NOT_PENDING. */
  public Future<String> cancelWebhook(String txId) {
    return Scripts.run(link, scripts.webhookCancel, List.of(keys.webhookH(txId), keys.webhooksZ(), keys.stateH(txId)),
        List.of(txId, now())).map(r -> r.get(0).toString());
  }

  /** The lease keys of the archive role are toArchiveLock1 and toArchiveLock2. */
  public static final String ARCHIVE_ROLE = "toArchive";

  /** Publishes a pipeline version; true when it became the current one. */
  public Future<Boolean> putPipeline(String name, String version, String group, boolean transactionType,
                                     String definition) {
    return Scripts.run(link, scripts.putPipeline, List.of(keys.pipelineH(name), keys.pipelineVersionsH(name),
            keys.pipelinesS()), List.of(version, group, transactionType ? "1" : "0", definition, now(), name))
        .map(r -> r.get(1).toInteger() == 1);
  }

  /** The definition JSON of one version of a pipeline, or null. */
  public Future<String> pipelineDefinition(String name, String version) {
    return link.send(Request.cmd(Command.HGET).arg(keys.pipelineVersionsH(name)).arg(version))
        .map(TxStore::str);
  }

  /** The node group a pipeline currently belongs to, or null when there is no such pipeline. */
  public Future<String> pipelineGroup(String name) {
    return link.send(Request.cmd(Command.HGET).arg(keys.pipelineH(name)).arg("nodeGroup")).map(TxStore::str);
  }

  static String str(Response r) {
    return r == null ? null : r.toString();
  }

  private static String emptyToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  private static JsonObject json(Response r) {
    String s = str(r);
    return s == null || s.isEmpty() ? null : new JsonObject(s);
  }

  /** Failures of Redis itself, as a refusal a client can understand. */
  public static TxException unavailable(Throwable cause) {
    return new TxException(TxException.Kind.UNAVAILABLE, "Redis did not answer: " + cause.getMessage(), null, null);
  }
}
