package io.conveyor.domain;

import io.conveyor.config.Config;
import io.conveyor.database.ArchiveStore;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.Ids;
import io.conveyor.model.StartRequest;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.redis.Batcher;
import io.conveyor.redis.Code;
import io.conveyor.redis.ControlStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.Handoff;
import io.conveyor.redis.QueueStore;
import io.conveyor.redis.ReadStore;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.RedisUnavailable;
import io.conveyor.redis.StoreContext;
import io.conveyor.redis.WebhookStore;
import io.conveyor.webhook.WebhookGuard;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import io.conveyor.trace.Tracing;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starting, reading, cancelling and signalling transactions: the domain service behind every interface
 * (HTTP, event bus, bridges, the shell client). Meant for one thread or Vert.x context at a time.
 */
public final class Transactions {
  private static final Logger log = LoggerFactory.getLogger(Transactions.class);
  private final StoreContext redis;
  private final QueueStore queue;
  private final ReadStore reads;
  private final ControlStore control;
  private final WebhookStore webhookStore;
  private final PipelineStore pipelines;
  private final PipelineCatalog catalog;
  private final NodeMetrics metrics;
  private final Config.Transactions settings;
  private final java.time.Duration archiveDelay;
  private final StartRequest.Limits limits;
  /** limits.maxPayloadBytes: a switch's value is a payload too (every way in reaches setSwitch). */
  private final int maxPayloadBytes;
  private final Batcher<QueueStore.NewTx, QueueStore.StartReply> starts;
  private final Future<ArchiveStore> archive;
  private final Config.Webhooks webhooks;
  private final Tracing tracing;
  private final MemoryGuard memory;

  /** What a node's interfaces open a Transactions with, one per verticle (each on a link of its own). */
  public record Factory(RedisAccess redis, PipelineCatalog catalog, Config config, ArchiveStore archive,
                        NodeMetrics metrics, Tracing tracing, java.util.function.Supplier<Handoff> handoff) {
    /** Starts offer no workers of this node (see Handoff). */
    public Factory(RedisAccess redis, PipelineCatalog catalog, Config config, ArchiveStore archive,
                   NodeMetrics metrics, Tracing tracing) {
      this(redis, catalog, config, archive, metrics, tracing, () -> Handoff.NONE);
    }

    public Factory(RedisAccess redis, PipelineCatalog catalog, Config config, ArchiveStore archive,
                   NodeMetrics metrics) {
      this(redis, catalog, config, archive, metrics, Tracing.OFF);
    }

    public Transactions open(Vertx vertx) {
      return on(redis.open(vertx));
    }

    /** A Transactions on a context the caller opened (and shares with stores of its own). */
    public Transactions on(StoreContext context) {
      return new Transactions(context, catalog, config, Future.succeededFuture(archive), metrics, tracing, handoff);
    }
  }

  /** Reads fall through to the archive (when it is there and opened) for what Redis no longer holds. */
  public Transactions(StoreContext redis, PipelineCatalog catalog, Config config, Future<ArchiveStore> archive,
                      NodeMetrics metrics) {
    this(redis, catalog, config, archive, metrics, Tracing.OFF);
  }

  /** The same, tracing each start (see Tracing). */
  public Transactions(StoreContext redis, PipelineCatalog catalog, Config config, Future<ArchiveStore> archive,
                      NodeMetrics metrics, Tracing tracing) {
    this(redis, catalog, config, archive, metrics, tracing, () -> Handoff.NONE);
  }

  /**
   * The same, offering this node's free workers to its starts (handoff, asked at each start call): a start whose
   * group has nothing waiting is taken for them in the start's own script (see Handoff).
   */
  public Transactions(StoreContext redis, PipelineCatalog catalog, Config config, Future<ArchiveStore> archive,
                      NodeMetrics metrics, Tracing tracing, java.util.function.Supplier<Handoff> handoff) {
    this.tracing = tracing;
    this.redis = redis;
    this.queue = new QueueStore(redis, config.limits().maxLive());
    this.reads = new ReadStore(redis);
    this.control = new ControlStore(redis, config.limits().maxErrors());
    this.webhookStore = new WebhookStore(redis);
    this.pipelines = new PipelineStore(redis);
    this.archive = archive;
    this.metrics = metrics;
    this.webhooks = config.webhooks();
    this.catalog = catalog;
    this.settings = config.transactions();
    this.archiveDelay = config.archive().delay();
    this.limits = new StartRequest.Limits(settings.maxMetadataBytes(), settings.maxInputBytes());
    this.maxPayloadBytes = config.limits().maxPayloadBytes();
    this.starts = new Batcher<>(Batcher.MAX, txs -> queue.start(txs, settings.externalIdPeriod(),
        settings.priorityStepMillis(), settings.ownerShare(), handoff.get()));
    this.memory = new MemoryGuard(config.redis().memory(), metrics);
  }

  /** The memory watcher's last verdict, as this service heard it (nothing judged when it hears none). */
  public io.conveyor.bus.MemoryJudged memory() {
    return memory.last();
  }

  /**
   * Fails with 503 redis-memory while every partition's Redis is judged full: a way in checks it before it writes
   * anything of its own (the HTTP API's start-rate token). A start checks its own partition again.
   */
  public Future<Void> admitsStarts() {
    TxException full = memory.refusalOfAll();
    return full == null ? Future.succeededFuture() : Future.failedFuture(full);
  }

  /** Starts a transaction from a request body; fails with a TxException a client can act on. */
  public Future<TxSummary> start(JsonObject body) {
    return start(body, null);
  }

  /**
   * The same, under the caller's W3C traceparent (from a header; null or malformed: a trace of its own). With
   * tracing on, the start is a span whose context the transaction keeps: its steps' spans hang under it.
   */
  public Future<TxSummary> start(JsonObject body, String traceparent) {
    StartRequest req;
    try {
      req = StartRequest.fromJson(body, limits);
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
    if (req.startAt() != null && req.startAt().toEpochMilli() > redis.clock().millis() + 366L * 86_400_000) {
      return Future.failedFuture(TxException.invalid("startAt", "at most 366 days ahead, got " + req.startAt()));
    }
    String txId = queue.newTxId(req.owner(), req.externalId());
    TxException full = memory.refusal(redis.keys().partitionOf(txId), txId);
    if (full != null) {
      return Future.failedFuture(full);
    }
    Future<Void> allowed = Future.succeededFuture();
    if (req.webhook() != null) {
      if (webhooks.secretFor(req.owner()).isEmpty()) {
        return Future.failedFuture(TxException.invalid("webhook", "webhooks are not set up here: "
            + "webhooks.secret (CONVEYOR_WEBHOOKS_SECRET) is empty"));
      }
      allowed = WebhookGuard.check(java.net.URI.create(req.webhook()), webhooks);
    }
    Span span = tracing.start("start " + req.type(), SpanKind.PRODUCER,
        Tracing.wellFormed(traceparent) ? traceparent : null);
    String trace = null;
    if (span != null) {
      span.setAttribute(Tracing.TX_ID, txId).setAttribute(Tracing.PIPELINE, req.type())
          .setAttribute(Tracing.OWNER, req.owner());
      trace = Tracing.traceparent(span);
    }
    String kept = trace;
    Future<TxSummary> started = allowed.compose(v -> catalog.groupOf(pipelines, req.type()))
        .compose(group -> group == null ? Future.failedFuture(unknownType(req.type()))
            : start(txId, req, group, kept, true))
        .recover(e -> e instanceof RedisUnavailable.NotReplicated ? Future.failedFuture(new TxException(
            Kind.UNAVAILABLE, e.getMessage() + "; " + txId + " is started but not known to survive: read it, or "
            + "start again with the same externalId", null, txId))
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

  private Future<TxSummary> start(String txId, StartRequest req, String group, String trace, boolean mayRetry) {
    // a client that will long-poll may ask that its reply cancel the webhook: give it time to
    java.time.Duration webhookDelay = req.webhook() != null
        && Boolean.TRUE.equals(req.metadata().getValue("pollReplyCancelsWebhook")) ? webhooks.pollGrace()
        : java.time.Duration.ZERO;
    return starts.add(new QueueStore.NewTx(txId, req, group, webhookDelay, trace,
        settings.shareOf(req.owner()))).compose(r -> switch (r.code()) {
      case OK -> {
        // the same time start.lua was given, so the same decision: scheduled for later, or queued now
        long startAt = req.startAtMillis(r.created());
        yield started(new TxSummary(txId, req.owner(), req.externalId(), req.type(), TxStatus.RUNNING,
            startAt == 0 ? "queued" : "scheduled", 0, Instant.ofEpochMilli(r.created()),
            Instant.ofEpochMilli(r.created()), null, req.metadata(), null, null, null,
            req.webhook() == null ? null : new JsonObject().put("url", req.webhook()).put("status", "waiting"),
            null, null, null, null, startAt == 0 ? null : Instant.ofEpochMilli(startAt)));
      }
      case GROUP_CHANGED -> mayRetry
          ? catalog.refreshGroup(pipelines, req.type()).compose(g -> start(txId, req, r.detail(), trace, false))
          : Future.failedFuture(new IllegalStateException("pipeline " + req.type() + " keeps changing group"));
      case UNKNOWN_TYPE -> Future.failedFuture(unknownType(req.type()));
      case DISABLED -> Future.failedFuture(new TxException(Kind.PIPELINE_DISABLED, "type: pipeline " + req.type()
          + " is disabled: it takes no new starts (an admin enables it with POST /api/v1/pipelines/" + req.type()
          + "/enable)", "type", null));
      case NOT_STARTABLE -> Future.failedFuture(new TxException(Kind.NOT_STARTABLE,
          "type: pipeline " + req.type() + " is not a transaction type (set transactionType: true to start it)",
          "type", null));
      case DUPLICATE_EXTERNAL_ID -> Future.failedFuture(new TxException(Kind.DUPLICATE_EXTERNAL_ID,
          "externalId: " + req.externalId() + " was used by transaction " + r.detail() + " within "
              + io.conveyor.model.Durations.format(settings.externalIdPeriod()), "externalId", r.detail()));
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

  /** The summary of one of an owner's transactions; another owner's answers not-found, like an unknown one. */
  public Future<TxSummary> status(String txId, String owner) {
    TxException bad = badReference(txId, owner);
    if (bad != null) {
      return Future.failedFuture(bad);
    }
    return reads.getState(txId).recover(Transactions::asRefusal)
        .compose(s -> s != null ? Future.succeededFuture(s) : archived(txId))
        .compose(s -> s == null || !owner.equals(s.owner())
            ? Future.failedFuture(new TxException(Kind.NOT_FOUND, "no transaction " + txId, null, txId))
            : Future.succeededFuture(s));
  }

  /** The summary from the archive, or null when it has none (or there is no archive). */
  private Future<TxSummary> archived(String txId) {
    return archive.compose(a -> a == null ? Future.succeededFuture(null) : a.find(txId))
        .transform(ar -> ar.succeeded() ? Future.succeededFuture(ar.result() == null ? null : ar.result().summary())
            : Future.failedFuture(archiveUnavailable(ar.cause())))
        .compose(this::withLiveWebhook);
  }

  /** An archived transaction whose webhook delivery still goes on: Redis has the current delivery state. */
  private Future<TxSummary> withLiveWebhook(TxSummary s) {
    if (s == null || s.webhook() == null || !"waiting".equals(s.webhook().getString("status"))) {
      return Future.succeededFuture(s);
    }
    return webhookStore.webhookState(s.txId(), s.webhook().getString("url"))
        .map(w -> w == null ? s : s.withWebhook(TxSummary.webhookView(w)))
        .recover(e -> {
          // the archived summary still answers; only the live delivery state is missing from it
          log.warn("{}: could not read its webhook's delivery state from Redis: {}", s.txId(), e.getMessage());
          return Future.succeededFuture(s);
        });
  }

  /**
   * After a long-poll answered with the outcome: if the client asked (metadata pollReplyCancelsWebhook), its
   * completion webhook is cancelled, unless an attempt has begun. Answers the summary to reply with.
   */
  public Future<TxSummary> pollAnswered(TxSummary s) {
    if (s.webhook() == null || !s.status().isFinal()
        || !Boolean.TRUE.equals(s.metadata() == null ? null : s.metadata().getValue("pollReplyCancelsWebhook"))) {
      return Future.succeededFuture(s);
    }
    return webhookStore.cancelWebhook(s.txId()).compose(code -> code == Code.CANCELLED ? status(s.txId(), s.owner())
        : Future.succeededFuture(s)).recover(e -> {
          // the client has its answer; the webhook then goes out too (twice told, never untold)
          log.warn("{}: could not cancel its webhook after a long-poll reply: {}", s.txId(), e.getMessage());
          return Future.succeededFuture(s);
        });
  }

  private static TxException archiveUnavailable(Throwable cause) {
    return new TxException(Kind.UNAVAILABLE, "the archive did not answer: " + cause.getMessage(), null, null);
  }

  /** Redis has no such transaction: an archived one of this owner has ended; else there is none. */
  private Future<TxSummary> notInRedis(String txId, String owner) {
    return archived(txId).compose(s -> s != null && owner.equals(s.owner())
        ? Future.failedFuture(new TxException(Kind.ALREADY_FINAL, "transaction " + txId + " has ended already ("
            + s.status().wire() + ")", null, txId))
        : Future.failedFuture(new TxException(Kind.NOT_FOUND, "no transaction " + txId, null, txId)));
  }

  /**
   * Cancels one of an owner's transactions: a waiting one ends cancelled at once, a running one at its next
   * step boundary (the answer then still says running). An ended one is refused as already-final.
   */
  public Future<TxSummary> cancel(String txId, String owner) {
    return cancelTree(txId, owner).map(Cancelled::summary);
  }

  /** A cancel's answer: the transaction as it stands, and how many of its tree the cancel walk has still to reach. */
  public record Cancelled(TxSummary summary, long pending) {
  }

  /**
   * As cancel, and the tree below it: what it waited for, and theirs, is cancelled by the walk (cancel-walk.lua),
   * at most 20 a script call and CANCEL_WALK_CALLS calls here; the reaper leader carries on what is left.
   */
  public Future<Cancelled> cancelTree(String txId, String owner) {
    TxException bad = badReference(txId, owner);
    if (bad != null) {
      return Future.failedFuture(bad);
    }
    return control.cancel(txId, owner, archiveDelay).compose(r -> switch (r.code()) {
      case NOT_FOUND -> notInRedis(txId, owner).map(s -> new Cancelled(s, 0));
      case ALREADY_FINAL -> Future.<Cancelled>failedFuture(new TxException(Kind.ALREADY_FINAL,
          "transaction " + txId + " has ended already (" + r.detail() + ")", null, txId));
      case CANCELLED -> {
        // it waited and ended here and now; one that runs is counted by the node that ends it
        metrics.completed(TxStatus.CANCELLED.wire(), owner);
        yield (r.pending() == 0 ? Future.succeededFuture(0L)
            : control.walk(txId, r.floor(), CANCEL_WALK_CALLS, archiveDelay))
            .compose(pending -> status(txId, owner).map(s -> new Cancelled(s, pending)));
      }
      default -> status(txId, owner).map(s -> new Cancelled(s, 0));
    }).recover(e -> Transactions.<Cancelled>asRefusal(e));
  }

  /** Script calls of at most 20 transactions a cancel makes before it answers (the reaper does the rest). */
  private static final int CANCEL_WALK_CALLS = 40;

  /**
   * Runs one of an owner's ended transactions again under its txId (failed, cancelled, timed out or ended
   * internal-error): from the step that failed, with the input that step had, or from the first step. One that
   * Redis no longer holds is brought back from the archive. Answers its summary (running again).
   */
  public Future<TxSummary> rerun(String txId, String owner, boolean fromStart) {
    TxException bad = badReference(txId, owner);
    if (bad != null) {
      return Future.failedFuture(bad);
    }
    return control.rerun(txId, owner, fromStart, null)
        .compose(r -> r.code() != Code.NOT_FOUND ? Future.succeededFuture(r) : archive
            .compose(a -> a == null ? Future.succeededFuture(null) : a.find(txId))
            .recover(e -> Future.failedFuture(archiveUnavailable(e)))
            .compose(a -> a == null || !owner.equals(a.owner()) ? Future.succeededFuture(r)
                : control.rerun(txId, owner, fromStart, a.state())))
        .compose(r -> switch (r.code()) {
          case OK -> status(txId, owner);
          case NOT_RERUNNABLE -> Future.<TxSummary>failedFuture(new TxException(Kind.NOT_RERUNNABLE, "transaction "
              + txId + (r.detail().equals("running") ? " is running" : " ended " + r.detail())
              + "; only one that failed, was cancelled, timed out or ended internal-error runs again", null, txId));
          case NO_STEP_INPUT -> Future.<TxSummary>failedFuture(new TxException(Kind.NOT_RERUNNABLE, "transaction "
              + txId + " ended before the input of its failed step was kept; run it again from the start "
              + "(from=start)", null, txId));
          default -> Future.<TxSummary>failedFuture(new TxException(Kind.NOT_FOUND, "no transaction " + txId, null,
              txId));
        }).recover(Transactions::asRefusal);
  }

  /**
   * Sets a switch on one of an owner's transactions (any JSON value); one sleeping on that switch wakes at
   * once. An ended one is refused as already-final.
   */
  public Future<TxSummary> setSwitch(String txId, String owner, String name, Object value) {
    TxException bad = badReference(txId, owner);
    if (bad != null) {
      return Future.failedFuture(bad);
    }
    String unclean = name == null ? null : io.conveyor.model.Identifiers.problem(name);
    if (unclean != null) {
      return Future.failedFuture(TxException.invalid("name", unclean));
    }
    int size = io.vertx.core.json.Json.encode(value).getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    if (size > maxPayloadBytes) {
      return Future.failedFuture(TxException.tooLarge("value", size, maxPayloadBytes));
    }
    if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) {
      return Future.failedFuture(TxException.invalid("name", "expected a switch name of letters, digits, _ . -"));
    }
    return control.setSwitch(txId, owner, name, value).compose(code -> switch (code) {
      case NOT_FOUND -> notInRedis(txId, owner);
      case ALREADY_FINAL -> Future.<TxSummary>failedFuture(new TxException(Kind.ALREADY_FINAL,
          "transaction " + txId + " has ended already", null, txId));
      default -> status(txId, owner);
    }).recover(Transactions::asRefusal);
  }

  /**
   * A Transactions service with a link of its own, for a client outside any node (the shell client, tests).
   * Like every Transactions, it is meant for one thread or Vert.x context at a time. It checks the
   * keyspace's layout first (a client with another number of partitions would read the wrong keys), so
   * call it off the event loop; a mismatch throws ConfigException.
   */
  /** The schedules, on this Transactions' Redis context. */
  public io.conveyor.redis.ScheduleStore schedules() {
    return new io.conveyor.redis.ScheduleStore(redis);
  }

  /** The clock the stores run on. */
  /** The stores' context (Redis link, keys, scripts, clock) this service runs on. */
  public StoreContext context() {
    return redis;
  }

  /** The archive, once open (null inside when there is none). */
  public Future<ArchiveStore> archive() {
    return archive;
  }

  public java.time.Clock clock() {
    return redis.clock();
  }

  /** Pauses, drains or resumes a node group, or reads its state (action read); see group-state.lua. */
  public Future<ControlStore.GroupState> group(String group, String action, String by) {
    if (action.equals("read")) {
      return control.groupState(group, action, by);
    }
    return Groups.known(new io.conveyor.redis.LivenessStore(redis), pipelines, group).compose(known -> known
        ? control.groupState(group, action, by) : Future.failedFuture(Groups.unknown(group)));
  }

  public static Transactions client(Vertx vertx, Config config) {
    RedisAccess redis = new RedisAccess(io.conveyor.redis.RedisLink.options(config.redis()), config.redis().timeout(),
        new io.conveyor.redis.Keys(config.redis().prefix(), config.redis().partitions()),
        new io.conveyor.redis.Scripts(), java.time.Clock.systemUTC(), io.conveyor.redis.ScriptMeter.NONE,
        new io.conveyor.redis.Replicas(config.redis().waitReplicas(), config.redis().waitTimeout()), config.limits());
    io.conveyor.redis.StoreContext context = redis.open(vertx);
    new io.conveyor.redis.LayoutStore(context).check().await();
    ArchiveStore archive = ArchiveStore.forConfig(vertx, config.archive());
    return new Transactions(context, new PipelineCatalog(new io.conveyor.pipeline.PipelineParser(
        io.conveyor.pipeline.StepRegistry.withBuiltIns())), config, archive.open().map(v -> archive),
        new NodeMetrics(false));
  }

  /** An owner's transaction by its externalId, while the externalId's uniqueness period lasts. */
  public Future<TxSummary> byExternalId(String externalId, String owner) {
    if (externalId == null || externalId.isEmpty()) {
      return Future.failedFuture(TxException.invalid("externalId", "is required"));
    }
    TxException none = new TxException(Kind.NOT_FOUND, "no transaction with externalId " + externalId,
        "externalId", null);
    // within its uniqueness period Redis names the txId; after it, only the archive knows
    return reads.txIdForExternalId(owner, externalId).recover(Transactions::asRefusal).compose(txId -> txId != null
        ? status(txId, owner)
        : archive.compose(a -> a == null ? Future.succeededFuture(null) : a.findByExternalId(owner, externalId))
            .transform(ar -> ar.failed() ? Future.failedFuture(archiveUnavailable(ar.cause()))
                : ar.result() == null ? Future.failedFuture(none) : Future.succeededFuture(ar.result().summary())));
  }

  /** Closes its link to Redis. */
  public Future<Void> close() {
    return memory.close().eventually(redis::close);
  }

  /** What is wrong with a {txId, owner} a client sent, or null. */
  private static TxException badReference(String txId, String owner) {
    if (!Ids.isTxId(txId)) {
      return TxException.invalid("txId", "expected tx- and 32 hex digits");
    }
    if (owner == null || owner.isEmpty()) {
      return TxException.invalid("owner", "is required");
    }
    String unclean = io.conveyor.model.Identifiers.problem(owner);
    return unclean == null ? null : TxException.invalid("owner", unclean);
  }

  private static TxException unknownType(String type) {
    return new TxException(Kind.UNKNOWN_TYPE, "type: no pipeline named " + type, "type", null);
  }

  /** Redis not answering becomes a refusal a client can act on (503); anything else stays what it is. */
  private static <T> Future<T> asRefusal(Throwable e) {
    return Future.failedFuture(e instanceof RedisUnavailable ? unavailable(e) : e);
  }

  public static TxException unavailable(Throwable cause) {
    if (cause instanceof RedisUnavailable.Full) {
      return TxException.redisFull(cause.getMessage(), null, 1);
    }
    return new TxException(Kind.UNAVAILABLE, cause.getMessage(), null, null);
  }
}
