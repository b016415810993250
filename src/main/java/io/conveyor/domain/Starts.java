package io.conveyor.domain;

import io.conveyor.bus.MemoryJudged;
import io.conveyor.config.Config;
import io.conveyor.model.Durations;
import io.conveyor.model.Gate;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.StartRequest;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.net.WebhookGuard;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.redis.Batcher;
import io.conveyor.redis.Handoff;
import io.conveyor.redis.PartitionBatchers;
import io.conveyor.redis.PartitionHealth;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.QueueStore;
import io.conveyor.redis.ReadStore;
import io.conveyor.redis.RedisUnavailable;
import io.conveyor.redis.StoreContext;
import io.conveyor.trace.Tracing;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;

/**
 * The start of a transaction, for Transactions: the request checked against the limits, the Redis memory verdict
 * and the webhook guard, then batched into start.lua, and each of its answer codes made a refusal a client can act
 * on. Meant for one thread or Vert.x context at a time, like the Transactions that owns it. Starts are batched per
 * partition, and placed by the node's PartitionHealth: a start that may go anywhere goes to an ok partition, one
 * bound to a failing partition waits up to redis.partitionWait for it (on the context that made this service; off
 * a context it does not wait), then answers 503 partition-unavailable.
 */
final class Starts {
  private final StoreContext redis;
  private final QueueStore queue;
  private final ReadStore reads;
  private final PipelineStore pipelines;
  private final PipelineCatalog catalog;
  private final NodeMetrics metrics;
  private final Config.Transactions settings;
  private final StartRequest.Limits limits;
  private final Config.Webhooks webhooks;
  private final Tracing tracing;
  private final MemoryGuard memory;
  private final PartitionBatchers<QueueStore.NewTx, QueueStore.StartReply> starts;
  private final PartitionHealth health;
  /** Where a bound start waits for its partition: the context this service was made on (null off a context). */
  private final Vertx vertx;

  /** handoff is asked at each start call: a start whose group has nothing waiting may go to this node's workers. */
  Starts(StoreContext redis, ReadStore reads, PipelineStore pipelines, PipelineCatalog catalog, Config config,
         NodeMetrics metrics, Tracing tracing, Supplier<Handoff> handoff) {
    this.redis = redis;
    this.queue = new QueueStore(redis);
    this.reads = reads;
    this.pipelines = pipelines;
    this.catalog = catalog;
    this.metrics = metrics;
    this.settings = config.transactions();
    this.limits = new StartRequest.Limits(settings.maxMetadataBytes(), settings.maxInputBytes());
    this.webhooks = config.webhooks();
    this.tracing = tracing;
    this.memory = new MemoryGuard(config.redis().memory(), metrics);
    this.starts = queue.starts(Batcher.MAX, settings.externalIdPeriod(), settings.priorityStepMillis(),
        settings.ownerShare(), handoff);
    this.health = redis.health();
    Context context = Vertx.currentContext();
    this.vertx = context == null ? null : context.owner();
  }

  /** The memory watcher's last verdict, as this service heard it (nothing judged when it hears none). */
  MemoryJudged memory() {
    return memory.last();
  }

  /**
   * Fails with 503 redis-memory while every partition's Redis is judged full: a way in checks it before it writes
   * anything of its own (the HTTP API's start-rate token). A start checks its own partition again.
   */
  Future<Void> admitsStarts() {
    TxException full = memory.refusalOfAll();
    return full == null ? Future.succeededFuture() : Future.failedFuture(full);
  }

  /**
   * Starts a transaction from a request body, under the caller's W3C traceparent (from a header; null or malformed: a trace of its own). With
   * tracing on, the start is a span whose context the transaction keeps: its steps' spans hang under it.
   */
  Future<TxSummary> start(JsonObject body, String traceparent) {
    StartRequest req;
    Gate own;
    try {
      req = StartRequest.fromJson(body, limits);
      own = Gate.of(body, "");
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
    if (req.startAt() != null && req.startAt().toEpochMilli() > redis.clock().millis() + 366L * 86_400_000) {
      return Future.failedFuture(TxException.invalid("startAt", "at most 366 days ahead, got " + req.startAt()));
    }
    Future<Void> allowed = Future.succeededFuture();
    if (req.webhook() != null) {
      if (webhooks.secretFor(req.owner()).isEmpty()) {
        return Future.failedFuture(TxException.invalid("webhook", "webhooks are not set up here: "
            + "webhooks.secret (CONVEYOR_WEBHOOKS_SECRET) is empty"));
      }
      allowed = WebhookGuard.check(URI.create(req.webhook()), webhooks);
    }
    return allowed.compose(v -> catalog.startOf(pipelines, req.type()))
        .compose(p -> p == null ? Future.failedFuture(unknownType(req.type())) : begin(req, own, p, traceparent, true));
  }

  /**
   * Starts it in its pipeline's group, under its gate (its own, else its pipeline's): a gated start's txId is in
   * its gate's partition, so start.lua decides the gate with the write (lib/gate.lua). One with an externalId is
   * bound to that one's partition too; any other goes to an ok partition (PartitionHealth.pickForStart).
   */
  private Future<TxSummary> begin(StartRequest req, Gate own, PipelineCatalog.Startable p, String traceparent,
                                  boolean mayRetry) {
    Gate gate = own != null ? own : p.gate();
    QueueStore.GateStart gated = null;
    if (gate != null) {
      try {
        gated = gated(req, gate);
      } catch (TxException e) {
        return Future.failedFuture(e);
      }
    }
    QueueStore.GateStart g = gated;
    if (gated == null && req.externalId() == null) {
      return begin(req, own, p, traceparent, mayRetry, null, health.pickForStart(), true);
    }
    int bound = gated != null ? queue.gatePartition(req.owner(), req.type(), gated)
        : redis.keys().partitionFor(req.owner(), req.externalId());
    return partitionReady(bound).compose(v -> begin(req, own, p, traceparent, mayRetry, g, bound, false));
  }

  /** The start in partition part; anywhere: it may go to any partition, and is placed again once if it never left. */
  private Future<TxSummary> begin(StartRequest req, Gate own, PipelineCatalog.Startable p, String traceparent,
                                  boolean mayRetry, QueueStore.GateStart gated, int part, boolean anywhere) {
    String txId = redis.keys().newTxId(part);
    TxException full = memory.refusal(part, txId);
    if (full != null) {
      return Future.failedFuture(full);
    }
    Span span = tracing.start("start " + req.type(), SpanKind.PRODUCER,
        Tracing.wellFormed(traceparent) ? traceparent : null);
    String trace = null;
    if (span != null) {
      span.setAttribute(Tracing.TX_ID, txId).setAttribute(Tracing.PIPELINE, req.type())
          .setAttribute(Tracing.OWNER, req.owner());
      trace = Tracing.traceparent(span);
    }
    Future<TxSummary> started = start(txId, req, p, gated, trace)
        .compose(r -> r != null ? Future.succeededFuture(r) : mayRetry
            ? catalog.refreshStart(pipelines, req.type()).compose(q -> q == null
                ? Future.failedFuture(unknownType(req.type())) : begin(req, own, q, traceparent, false))
            : Future.failedFuture(new IllegalStateException("pipeline " + req.type() + " keeps changing group")))
        .recover(e -> e instanceof RedisUnavailable.NotReplicated ? Future.failedFuture(new TxException(
            Kind.UNAVAILABLE, e.getMessage() + "; " + txId + " is started but not known to survive: read it, or "
            + "start again with the same externalId", null, txId))
            : e instanceof RedisUnavailable.NotSent ? notSent(req, own, p, traceparent, part, anywhere, e)
            : e instanceof RedisUnavailable ? confirm(txId, e) : Future.failedFuture(e));
    if (span != null) {
      started.onComplete(ar -> {
        if (ar.failed()) {
          span.setStatus(StatusCode.ERROR, ar.cause().getMessage());
        }
        span.end();
      });
    }
    return started;
  }

  /**
   * The start never reached Redis (no connection, or the partition's backlog was full), so nothing ran: one that
   * may go anywhere is placed again, once, in another ok partition with a new txId; one bound to its partition
   * answers 503 partition-unavailable.
   */
  private Future<TxSummary> notSent(StartRequest req, Gate own, PipelineCatalog.Startable p, String traceparent,
                                    int part, boolean anywhere, Throwable cause) {
    int other = anywhere ? health.pickOtherThan(part) : -1;
    if (other >= 0) {
      return begin(req, own, p, traceparent, true, null, other, false);
    }
    return Future.failedFuture(anywhere ? new TxException(Kind.UNAVAILABLE, cause.getMessage() + "; no other "
        + "partition answers now, and nothing was started: retry shortly", null, null)
        : partitionUnavailable(part, cause.getMessage() + "; nothing was started"));
  }

  /** Succeeds once partition part is not failing, within redis.partitionWait; else fails partition-unavailable. */
  private Future<Void> partitionReady(int part) {
    if (health.state(part) != PartitionHealth.State.FAILING) {
      return Future.succeededFuture();
    }
    Promise<Void> ready = Promise.promise();
    awaitPartition(part, redis.ticker().nanos() + health.settings().waitFor().toNanos(), ready);
    return ready.future();
  }

  private void awaitPartition(int part, long deadline, Promise<Void> ready) {
    PartitionHealth.Status now = health.status(part);
    long left = deadline - redis.ticker().nanos();
    if (now.state() != PartitionHealth.State.FAILING) {
      ready.complete();
    } else if (left <= 0 || vertx == null) {
      ready.fail(partitionUnavailable(part, now.reason() + "; waited " + Durations.format(
          health.settings().waitFor()) + " (redis.partitionWait) for it, nothing was started"));
    } else {
      vertx.setTimer(Math.max(1, Math.min(50, left / 1_000_000)), t -> awaitPartition(part, deadline, ready));
    }
  }

  /** 503 partition-unavailable, naming the partition a start is bound to. */
  private TxException partitionUnavailable(int part, String why) {
    return TxException.partitionUnavailable("partition " + part + " (its Redis master) is failing over: " + why
        + "; this start is bound to it by its externalId or gate key: retry shortly, or start without an "
        + "externalId to go to another partition", 1);
  }

  /** A gated start's key value and decision input; a start that names its own time or externalId is refused. */
  private static QueueStore.GateStart gated(StartRequest req, Gate gate) {
    if (req.startAt() != null || req.delay() != null) {
      throw TxException.invalid(req.startAt() != null ? "startAt" : "delay", "a start under a " + gate.kind()
          + " gate starts when its gate lets it: give no startAt or delay");
    }
    if (req.externalId() != null) {
      throw TxException.invalid("externalId", "a start under a " + gate.kind() + " gate is placed by its gate key,"
          + " not by an externalId: give no externalId (docs/decisions.md)");
    }
    String value = gate.keyFor(req.input(), req.metadata());
    return new QueueStore.GateStart(gate.kind(), value, gate.decided(value).encode());
  }

  /**
   * Redis failed somewhere around the start, so it may or may not have happened. Look: a start that
   * landed answers as one (a client retrying after a 503 would otherwise start it twice); else the
   * refusal names the txId, so the client can ask again later.
   */
  private Future<TxSummary> confirm(String txId, Throwable cause) {
    return reads.getState(txId).transform(ar -> ar.succeeded() && ar.result() != null
        ? Future.succeededFuture(ar.result())
        : cause instanceof RedisUnavailable.Full ? Future.failedFuture(memory.refusedByRedis(cause, txId))
        : Future.failedFuture(new TxException(Kind.UNAVAILABLE, "Redis did not answer (" + cause.getMessage()
            + "); the start may or may not have happened: read " + txId + " to know", null, txId)));
  }

  /** One start through start.lua: its summary, or null when the pipeline's group or gate changed (read them again). */
  private Future<TxSummary> start(String txId, StartRequest req, PipelineCatalog.Startable p,
                                  QueueStore.GateStart gated, String trace) {
    // a client that will long-poll may ask that its reply cancel the webhook: give it time to
    Duration webhookDelay = req.webhook() != null
        && Boolean.TRUE.equals(req.metadata().getValue("pollReplyCancelsWebhook")) ? webhooks.pollGrace()
        : Duration.ZERO;
    return starts.add(new QueueStore.NewTx(txId, req, p.group(), webhookDelay, trace,
        settings.shareOf(req.owner()), gated, p.gateText())).compose(r -> switch (r.code()) {
      // start.lua's answer says how it went in (queued, scheduled, or handed to this node's workers, which is
      // attempt 1 as start.lua stored it); a gated one is read back, as its gate decided its state
      case OK -> gated != null ? reads.getState(txId).compose(this::started)
          : started(new TxSummary(txId, req.owner(), req.externalId(), req.type(), TxStatus.RUNNING,
          r.state(), "processing".equals(r.state()) ? 1 : 0, Instant.ofEpochMilli(r.created()), Instant.ofEpochMilli(r.created()), null, req.metadata(),
          null, null, null,
          req.webhook() == null ? null : new JsonObject().put("url", req.webhook()).put("status", "waiting"),
          null, null, null, null, r.startAt() == 0 ? null : Instant.ofEpochMilli(r.startAt()), null, null));
      case GROUP_CHANGED -> Future.succeededFuture(null);
      case DEBOUNCED -> reads.getState(r.detail()).map(s -> s.withGate(s.gate() == null ? null
          : s.gate().copy().put("debounced", true)));
      case THROTTLED -> Future.failedFuture(Gates.throttled(gated.value(), r.detail(), redis.clock().millis()));
      case GATE_BUSY -> Future.failedFuture(Gates.busy(gated.value(), r.detail()));
      case UNKNOWN_TYPE -> Future.failedFuture(unknownType(req.type()));
      case DISABLED -> Future.failedFuture(new TxException(Kind.PIPELINE_DISABLED, "type: pipeline " + req.type()
          + " is disabled: it takes no new starts (an admin enables it with POST /api/v1/pipelines/" + req.type()
          + "/enable)", "type", null));
      case NOT_STARTABLE -> Future.failedFuture(new TxException(Kind.NOT_STARTABLE,
          "type: pipeline " + req.type() + " is not a transaction type (set transactionType: true to start it)",
          "type", null));
      case DUPLICATE_EXTERNAL_ID -> Future.failedFuture(new TxException(Kind.DUPLICATE_EXTERNAL_ID,
          "externalId: " + req.externalId() + " was used by transaction " + r.detail() + " within "
              + Durations.format(settings.externalIdPeriod()), "externalId", r.detail()));
      case LIVE_LIMIT -> Future.failedFuture(liveLimit(req.owner(), r.detail(), redis.keys().partitions()));
      default -> Future.failedFuture(new IllegalStateException("start answered " + r.code()));
    });
  }

  /** The refusal of a start past the owner's maxLive; detail is start.lua's "limit:share of this partition". */
  static TxException liveLimit(String owner, String detail, int partitions) {
    String[] d = detail.split(":");
    return new TxException(Kind.LIVE_LIMIT, "owner " + owner + " has as many live transactions as maxLive = " + d[0]
        + " allows" + (partitions > 1 ? " (" + d[1] + " in each of " + partitions + " partitions)" : "")
        + "; retry once some have ended, or ask an admin to raise it (PUT /api/v1/admin/owners/" + owner + ")",
        "owner", null);
  }

  private Future<TxSummary> started(TxSummary s) {
    metrics.started(s.owner());
    return Future.succeededFuture(s);
  }

  private static TxException unknownType(String type) {
    return new TxException(Kind.UNKNOWN_TYPE, "type: no pipeline named " + type, "type", null);
  }

  /** Stops hearing the memory watcher. */
  Future<Void> close() {
    return memory.close();
  }
}
