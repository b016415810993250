package io.conveyor.redis;

import static io.conveyor.redis.Replies.str;

import io.conveyor.model.TxSummary;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Webhook deliveries: results in, due deliveries out (leader only), and a long-poll's cancel. */
public final class WebhookStore extends Store {
  public WebhookStore(StoreContext r) {
    super(r);
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

  /** The webhook settings webhook.lua needs. */
  public record WebhookLimits(Duration lease, Duration grace, Duration lostAfter, int failureLimit,
                              Duration failureWindow, Duration pause) {
  }

  /**
   * Records results and, if the caller leads the webhook role of partition p, hands out up to max due
   * deliveries of it. Every result must be of that partition.
   */
  public Future<WebhookBatch> webhookBatch(int p, String nodeId, List<WebhookResult> results, int max,
                                           WebhookLimits l) {
    List<String> k = new ArrayList<>(4 + results.size());
    k.addAll(List.of(keys.webhooksZ(p), keys.lock1(LeaderRole.WEBHOOKS, p), keys.lock2(LeaderRole.WEBHOOKS, p),
        keys.eventsL(p)));
    List<String> args = new ArrayList<>(13 + 6 * results.size());
    args.addAll(List.of(nodeId, r.now(), Integer.toString(max), Long.toString(l.lease().toMillis()),
        Long.toString(l.grace().toMillis()), keys.webhookH(p, ""), Long.toString(l.lostAfter().toMillis()),
        Integer.toString(l.failureLimit()), Long.toString(l.failureWindow().toMillis()),
        Long.toString(l.pause().toMillis()), keys.stateH(p, ""), keys.webhookCounter(p, ""),
        keys.webhookPause(p, "")));
    for (WebhookResult res : results) {
      k.add(keys.webhookH(res.webhookId()));
      args.addAll(List.of(res.webhookId(), res.outcome(), Integer.toString(res.attempt()),
          res.code() == null ? "" : res.code().toString(), res.error() == null ? "" : res.error(),
          res.outcome().equals("retry") ? Long.toString(res.next()) : ""));
    }
    return r.run(r.scripts().webhook, k, args).map(reply -> {
      List<WebhookJob> jobs = new ArrayList<>(reply.size() - 1);
      for (int i = 1; i < reply.size(); i++) {
        Response job = reply.get(i);
        JsonObject event = Replies.flatHash(job.get(2));
        jobs.add(new WebhookJob(job.get(0).toString(), job.get(1).toString(), event,
            Summaries.fromFields(event.getString("txId"), job.get(3))));
      }
      return new WebhookBatch(reply.get(0).toInteger() == 1, jobs);
    }).compose(this::opened);
  }

  /** An archived summary with its payloads opened (the archive keeps them sealed). */
  public Future<TxSummary> opened(TxSummary s) {
    return Seals.opened(payloads(), s);
  }

  /** The jobs with their summaries opened (an encrypted owner's payloads are posted to it in clear). */
  private Future<WebhookBatch> opened(WebhookBatch b) {
    List<Future<WebhookJob>> each = b.jobs().stream().map(j -> Seals.opened(payloads(), j.summary())
        .map(s -> new WebhookJob(j.kind(), j.webhookId(), j.event(), s))).toList();
    return Future.all(each).map(v -> new WebhookBatch(b.leader(), each.stream().map(Future::result).toList()));
  }

  /** Cancels a transaction's completion webhook after a long-poll reply: CANCELLED, TOO_LATE or NOT_PENDING. */
  public Future<Code> cancelWebhook(String txId) {
    return r.run(r.scripts().webhookCancel, List.of(keys.webhookH(txId), keys.webhooksZ(keys.partitionOf(txId)),
            keys.stateH(txId)),
        List.of(txId, r.now())).map(Code::of);
  }

  /** The delivery state of a transaction's completion webhook while it goes on, or null (see get-state.lua). */
  public Future<JsonObject> webhookState(String txId, String url) {
    return r.send(Request.cmd(Command.HMGET).arg(keys.webhookH(txId)).arg("status").arg("attempts")
        .arg("lastError").arg("lastCode").arg("nextAttempt").arg("lastAttempt"))
        .map(reply -> {
          JsonObject w = Summaries.pendingWebhook(str(reply.get(0)), reply, 1);
          return w == null ? null : w.put("url", url);
        });
  }
}
