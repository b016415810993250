package io.conveyor.webhook;

import io.conveyor.database.ArchiveStore;
import io.conveyor.bus.Addresses;
import io.conveyor.config.BuildInfo;
import io.conveyor.config.Config;
import io.conveyor.lease.LeaderLoop;
import io.conveyor.lease.RoundFailures;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.TxSummary;
import io.conveyor.net.WebhookGuard;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.StoreContext;
import io.conveyor.redis.WebhookStore;
import io.conveyor.redis.WebhookStore.WebhookJob;
import io.conveyor.redis.WebhookStore.WebhookLimits;
import io.conveyor.redis.WebhookStore.WebhookResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers webhooks, on the leader of the webhook role only (webhookLock1/2). A tick is one webhook.lua
 * call: it records the results of finished deliveries and hands out due ones (each rescheduled first, so
 * a crash means a retry), up to webhooks.concurrency under way at once. Each delivery is a signed POST
 * (Standard Webhooks); 2xx is delivered, 410 gone, anything else (or no answer within webhooks.timeout) is
 * retried with exponential backoff and jitter until webhooks.maxAttempts, honouring Retry-After on 429 and
 * 503. Redirects are not followed. The leader ticks when a webhook becomes due (a note on notify), when a
 * delivery ends, when a node died (it may have held the lease), and every webhooks.interval; the ticking, the
 * renewal and the hand-on are the LeaderLoop's.
 */
public final class WebhookVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(WebhookVerticle.class);
  private final RedisAccess redis;
  private final ArchiveStore archive;
  private final Config.Webhooks settings;
  private final String nodeId;
  private final NodeMetrics metrics;
  private final io.conveyor.trace.Tracing tracing;
  private final WebhookLimits limits;
  private final Backoff backoff;
  private final Map<String, Signer> signers = new HashMap<>();
  private StoreContext redisContext;
  private WebhookStore store;
  private final int partition;
  private final LeaderLoop.Seat seat;
  private LeaderLoop loop;
  private HttpClient http;
  private List<WebhookResult> results = new ArrayList<>();
  private int inFlight;
  /** Deliveries (and syncs) this node has under way, by webhookId. */
  private final java.util.Set<String> underway = new java.util.HashSet<>();
  /** A webhook.lua call is under way. */
  private boolean ticking;
  private int redisFailures;
  private RoundFailures failedRounds;
  private boolean stopping;
  private Promise<Void> idle;

  /**
   * The webhook role of one partition (the seat's). With several, each node runs one of these per partition,
   * and only those the assignment gives it ask for their lease; the others send nothing. archive: where a
   * delivery of an archived transaction reads its summary and records its outcome.
   */
  public WebhookVerticle(RedisAccess redis, ArchiveStore archive, Config.Webhooks settings, NodeMetrics metrics,
                         LeaderLoop.Seat seat, io.conveyor.trace.Tracing tracing) {
    this.tracing = tracing;
    this.seat = seat;
    this.partition = seat.partition();
    this.redis = redis;
    this.archive = archive;
    this.settings = settings;
    this.nodeId = seat.nodeId();
    this.metrics = metrics;
    this.limits = new WebhookLimits(settings.lease(), settings.grace(), settings.timeout().plusSeconds(5),
        settings.failureLimit(), settings.failureWindow(), settings.pause());
    this.backoff = new Backoff(settings);
  }

  @Override
  public Future<?> start() {
    redisContext = redis.open(vertx);
    store = new WebhookStore(redisContext);
    failedRounds = new RoundFailures(log, "webhook delivery (partition " + partition + ")");
    loop = new LeaderLoop(vertx, redisContext, seat, "webhook delivery"
        + (redis.keys().partitions() > 1 ? " (partition " + partition + ")" : ""), settings.lease(), this::round);
    http = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout((int) settings.timeout().toMillis())
        .setKeepAlive(true).setIdleTimeout(60), new PoolOptions().setHttp1MaxSize(Math.min(settings.concurrency(), 50)));
    return Future.all(vertx.eventBus().<String>localConsumer(Addresses.WEBHOOKS_DUE, m -> {
      if (redis.keys().partitionOf(m.body()) == partition) {
        loop.tick();
      }
    }).completion(), loop.wakeOnNodeDied()).onSuccess(v -> loop.tick());
  }

  /** One webhook.lua call (the loop never runs two at once); answers when the next is due. */
  private Future<Long> round() {
    boolean wanted = loop.wanted();
    if (!wanted && results.isEmpty() && inFlight == 0 && !loop.leads()) {
      // another node's partition, and nothing of it here: nothing to ask Redis
      return Future.succeededFuture(settings.interval().toMillis());
    }
    ticking = true;
    List<WebhookResult> reporting = results;
    results = new ArrayList<>();
    int max = stopping || !wanted ? 0 : Math.max(0, settings.concurrency() - inFlight);
    long asked = loop.asking();
    return store.webhookBatch(partition, nodeId, reporting, max, limits).<Long>transform(ar -> {
      ticking = false;
      if (ar.failed()) {
        reporting.addAll(results);
        results = reporting; // they go again: a result for an attempt already recorded is ignored
        redisFailures++;
        failedRounds.failed(ar.cause());
        checkIdle();
        return Future.succeededFuture(Math.min(settings.interval().toMillis(), 50L << Math.min(6, redisFailures)));
      }
      redisFailures = 0;
      failedRounds.worked();
      loop.update(ar.result().leader(), asked);
      if (!wanted && loop.leads() && inFlight == 0 && results.isEmpty()) {
        // the partition went to another node and nothing of it is under way here: hand it on now
        loop.letGo();
      }
      // jobs answered after the lease that handed them out ran out (by this node's clock) are left alone:
      // another node may lead by now, and each job was rescheduled before it was handed out
      for (WebhookJob job : loop.leads() ? ar.result().jobs() : List.<WebhookJob>of()) {
        if (job.kind().equals("sync")) {
          sync(job);
        } else {
          deliver(job);
        }
      }
      checkIdle();
      // results came meanwhile, or more may be due: at once
      boolean now = !results.isEmpty() || (max > 0 && ar.result().jobs().size() >= max);
      return Future.succeededFuture(now ? 0L : settings.interval().toMillis());
    });
  }

  private void report(WebhookResult r) {
    metrics.webhook(r.outcome());
    results.add(r);
    if (stopping) {
      checkIdle();
    } else {
      loop.tick();
    }
  }

  /** Delivery ended for an archived transaction: the archive gets its final state, then Redis lets it go. */
  private void sync(WebhookJob job) {
    if (!underway.add(job.webhookId())) {
      return;
    }
    inFlight++;
    String txId = job.event().getString("txId");
    archive.updateWebhook(txId, new JsonObject(job.event().getString("state"))).onComplete(ar -> {
      inFlight--;
      underway.remove(job.webhookId());
      if (ar.succeeded()) {
        if (!ar.result()) {
          log.warn("the archive ({}) has no row for {}: its webhook outcome goes to eventsL instead",
              archive.describe(), txId);
        }
        report(new WebhookResult(job.webhookId(), ar.result() ? "synced" : "unsynced", 0, null, null, 0));
      } else {
        // it stays scheduled and comes back once the archive answers
        log.warn("could not record the webhook outcome of {} in the archive: {}", txId, ar.cause().getMessage());
        checkIdle();
      }
    });
  }

  /**
   * One attempt, bounded as a whole by webhooks.timeout (reading the summary, checking the address, getting
   * a connection, the POST): its entry is due again only timeout + 5 s after it was handed out, so it is
   * never handed out twice while under way. A delivery this node still runs is not started again.
   */
  private void deliver(WebhookJob job) {
    if (!underway.add(job.webhookId())) {
      return;
    }
    inFlight++;
    JsonObject event = job.event();
    int attempt = Integer.parseInt(event.getString("attempts")) + 1;
    String url = event.getString("url");
    Promise<Answer> done = Promise.promise();
    Sent sent = new Sent();
    long timer = vertx.setTimer(settings.timeout().toMillis(), t -> {
      if (done.tryFail("no answer within " + io.conveyor.model.Durations.format(settings.timeout()))
          && sent.request != null) {
        sent.request.reset();
      }
    });
    // a traced transaction's delivery is a span under its start; the receiver gets it as traceparent
    String trace = event.getString("trace");
    io.opentelemetry.api.trace.Span span = trace == null ? null
        : tracing.start("webhook POST", io.opentelemetry.api.trace.SpanKind.CLIENT, trace);
    if (span != null) {
      span.setAttribute(io.conveyor.trace.Tracing.TX_ID, event.getString("txId"))
          .setAttribute("http.request.method", "POST").setAttribute("url.full", url)
          .setAttribute("conveyor.webhook_attempt", attempt).setAttribute(io.conveyor.trace.Tracing.NODE, nodeId);
    }
    String traceparent = span != null ? io.conveyor.trace.Tracing.traceparent(span) : trace;
    Future<TxSummary> summary = job.summary() != null ? Future.succeededFuture(job.summary())
        : archive.find(event.getString("txId")).compose(a -> store.opened(a == null ? null : a.summary()));
    URI target = URI.create(url);
    summary.compose(s -> s == null
            ? Future.failedFuture(new IllegalStateException("transaction " + event.getString("txId") + " not found"))
            : WebhookGuard.check(target, settings).map(v -> s))
        .compose(s -> post(job.webhookId(), event, s, done.future(), sent, traceparent))
        .onComplete(ar -> {
          if (ar.succeeded()) {
            done.tryComplete(ar.result());
          } else {
            done.tryFail(ar.cause());
          }
        });
    long began = seat.ticker().nanos();
    done.future().onComplete(ar -> {
      vertx.cancelTimer(timer);
      if (span != null) {
        if (ar.succeeded()) {
          span.setAttribute("http.response.status_code", ar.result().code());
        }
        if (ar.failed() || ar.result().code() >= 400) {
          span.setStatus(io.opentelemetry.api.trace.StatusCode.ERROR,
              ar.failed() ? ar.cause().getMessage() : "HTTP " + ar.result().code());
        }
        span.end();
      }
      inFlight--;
      underway.remove(job.webhookId());
      if (ar.failed() && stalledHere(began)) {
        // this node, not the receiver, was silent (a pause): the attempt is not the receiver's failure and is
        // not recorded; the job, rescheduled when handed out, comes back to whoever leads
        log.info("webhook {} to {}: attempt {} given up after this node stalled; not counted against the URL",
            job.webhookId(), url, attempt);
        checkIdle();
        return;
      }
      report(ar.succeeded() ? outcome(job.webhookId(), attempt, ar.result())
          : failure(job.webhookId(), attempt, null, ar.cause().getMessage(), null));
    });
  }

  /** The request of one attempt once it is sent, so its timeout can reset it (all on this verticle's context). */
  private static final class Sent {
    private HttpClientRequest request;
  }

  /** The POST of one attempt; answers the HTTP status and Retry-After header. Sends nothing once over. */
  private Future<Answer> post(String id, JsonObject event, TxSummary summary, Future<Answer> over,
                              Sent sent, String traceparent) {
    long now = redisContext.clock().millis();
    JsonObject body = new JsonObject().put("eventType", event.getString("event"))
        .put("eventTime", Instant.ofEpochMilli(Long.parseLong(event.getString("eventTime"))).toString())
        .put("deliveryTime", Instant.ofEpochMilli(now).toString());
    JsonObject s = summary.toJson();
    s.remove("webhook");
    body.mergeIn(s);
    if (event.containsKey("report")) {
      body.put("progressReport", new JsonObject(event.getString("report"))); // as it was when reported
    }
    String text = body.encode();
    long ts = now / 1000;
    RequestOptions o = new RequestOptions().setMethod(HttpMethod.POST).setAbsoluteURI(event.getString("url"))
        .setFollowRedirects(false)
        .setConnectTimeout(settings.timeout().toMillis())
        .putHeader("content-type", "application/json")
        .putHeader("user-agent", "Conveyor/" + BuildInfo.version())
        .putHeader("webhook-id", id)
        .putHeader("webhook-timestamp", Long.toString(ts))
        .putHeader("webhook-signature", signer(event.getString("owner")).sign(id, ts, text));
    if (traceparent != null) {
      o.putHeader("traceparent", traceparent);
    }
    return http.request(o)
        .compose(req -> {
          if (over.isComplete()) {
            req.reset(); // the attempt was given up (and recorded) while it waited for a connection
            return Future.<HttpClientResponse>failedFuture("given up before sending");
          }
          sent.request = req;
          return req.send(text);
        })
        .compose(resp -> resp.body().map(b -> new Answer(resp.statusCode(), resp.getHeader("retry-after"))));
  }

  private record Answer(int code, String retryAfter) {
  }

  /**
   * An attempt that failed after this node lost its lease, or that lasted well past its timeout (its timer
   * fired late: the process was paused), says nothing about the receiver.
   */
  private boolean stalledHere(long began) {
    long ms = (seat.ticker().nanos() - began) / 1_000_000;
    return !loop.leads() || ms > settings.timeout().plus(settings.lease()).toMillis();
  }

  private Signer signer(String owner) {
    return signers.computeIfAbsent(settings.secretFor(owner), Signer::new);
  }

  private WebhookResult outcome(String id, int attempt, Answer a) {
    if (a.code() >= 200 && a.code() < 300) {
      return new WebhookResult(id, "delivered", attempt, a.code(), null, 0);
    }
    if (a.code() == 410) {
      return new WebhookResult(id, "gone", attempt, a.code(), "HTTP 410: the receiver wants no more", 0);
    }
    String error = "HTTP " + a.code() + (a.code() >= 300 && a.code() < 400 ? " (redirects are not followed)" : "");
    Long after = (a.code() == 429 || a.code() == 503)
        ? Backoff.retryAfterMillis(a.retryAfter(), redisContext.clock().millis()) : null;
    return failure(id, attempt, a.code(), error, after);
  }

  /** A failed attempt: retried after the backoff (or the receiver's Retry-After), or exhausted. */
  private WebhookResult failure(String id, int attempt, Integer code, String error, Long retryAfter) {
    String e = error == null ? "failed" : error.length() > 300 ? error.substring(0, 300) : error;
    if (attempt >= settings.maxAttempts()) {
      return new WebhookResult(id, "exhausted", attempt, code, e, 0);
    }
    long delay = retryAfter != null ? retryAfter : backoff.delayFor(attempt);
    return new WebhookResult(id, "retry", attempt, code, e, redisContext.clock().millis() + delay);
  }

  private void checkIdle() {
    if (idle != null && !ticking && inFlight == 0) {
      idle.tryComplete();
    }
  }

  /** Lets deliveries under way end, records their results, and hands the lease on. */
  @Override
  public Future<?> stop() {
    stopping = true;
    loop.stop();
    idle = Promise.promise();
    checkIdle();
    return idle.future()
        .timeout(settings.timeout().toMillis() + 1000, TimeUnit.MILLISECONDS)
        .compose(v -> store.webhookBatch(partition, nodeId, results, 0, limits))
        .compose(v -> loop.handOn())
        .onFailure(e -> log.warn("webhook delivery stopped uncleanly (the next leader retries): {}", e.getMessage()))
        .transform(ar -> http.close().transform(x -> redisContext.close()));
  }
}
