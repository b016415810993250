package io.conveyor.domain;

import io.conveyor.bus.MemoryJudged;
import io.conveyor.config.Config;
import io.conveyor.database.ArchiveStore;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.Identifiers;
import io.conveyor.model.Ids;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.redis.Code;
import io.conveyor.redis.ControlStore;
import io.conveyor.redis.Handoff;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.ReadStore;
import io.conveyor.redis.RedisUnavailable;
import io.conveyor.redis.ScheduleStore;
import io.conveyor.redis.StoreContext;
import io.conveyor.redis.WebhookStore;
import io.conveyor.trace.Tracing;
import io.vertx.core.Future;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starting, reading, cancelling and signalling transactions: the domain service behind every interface
 * (HTTP, event bus, bridges, the shell client). Meant for one thread or Vert.x context at a time.
 */
public final class Transactions {
  private static final Logger log = LoggerFactory.getLogger(Transactions.class);
  private final StoreContext redis;
  private final ReadStore reads;
  private final ControlStore control;
  private final WebhookStore webhookStore;
  private final PipelineStore pipelines;
  private final NodeMetrics metrics;
  private final Duration archiveDelay;
  /** limits.maxPayloadBytes: a switch's value is a payload too (every way in reaches setSwitch). */
  private final int maxPayloadBytes;
  private final Future<ArchiveStore> archive;
  private final Starts starts;

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
                      NodeMetrics metrics, Tracing tracing, Supplier<Handoff> handoff) {
    this.redis = redis;
    this.reads = new ReadStore(redis);
    this.control = new ControlStore(redis);
    this.webhookStore = new WebhookStore(redis);
    this.pipelines = new PipelineStore(redis);
    this.archive = archive;
    this.metrics = metrics;
    this.archiveDelay = config.archive().delay();
    this.maxPayloadBytes = config.limits().maxPayloadBytes();
    this.starts = new Starts(redis, reads, pipelines, catalog, config, metrics, tracing, handoff);
  }

  /** The memory watcher's last verdict, as this service heard it (nothing judged when it hears none). */
  public MemoryJudged memory() {
    return starts.memory();
  }

  /**
   * Fails with 503 redis-memory while every partition's Redis is judged full: a way in checks it before it writes
   * anything of its own (the HTTP API's start-rate token). A start checks its own partition again.
   */
  public Future<Void> admitsStarts() {
    return starts.admitsStarts();
  }

  /** Starts a transaction from a request body; fails with a TxException a client can act on. */
  public Future<TxSummary> start(JsonObject body) {
    return starts.start(body, null);
  }

  /** The same, under the caller's W3C traceparent (see Starts). */
  public Future<TxSummary> start(JsonObject body, String traceparent) {
    return starts.start(body, traceparent);
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
        .compose(reads::opened).compose(this::withLiveWebhook);
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
    String unclean = name == null ? null : Identifiers.problem(name);
    if (unclean != null) {
      return Future.failedFuture(TxException.invalid("name", unclean));
    }
    int size = Json.encode(value).getBytes(StandardCharsets.UTF_8).length;
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

  /** The schedules, on this Transactions' Redis context. */
  public ScheduleStore schedules() {
    return new ScheduleStore(redis);
  }

  /** The stores' context (Redis link, keys, scripts, clock) this service runs on. */
  public StoreContext context() {
    return redis;
  }

  /** The archive, once open (null inside when there is none). */
  public Future<ArchiveStore> archive() {
    return archive;
  }

  /** The clock the stores run on. */
  public Clock clock() {
    return redis.clock();
  }

  /** Pauses, drains or resumes a node group, or reads its state (action read); see group-state.lua. */
  public Future<ControlStore.GroupState> group(String group, String action, String by) {
    if (action.equals("read")) {
      return control.groupState(group, action, by);
    }
    return Groups.known(new LivenessStore(redis), pipelines, group).compose(known -> known
        ? control.groupState(group, action, by) : Future.failedFuture(Groups.unknown(group)));
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
                : ar.result() == null ? Future.failedFuture(none) : reads.opened(ar.result().summary())));
  }

  /** Closes its link to Redis. */
  public Future<Void> close() {
    return starts.close().eventually(redis::close);
  }

  /** What is wrong with a {txId, owner} a client sent, or null. */
  static TxException badReference(String txId, String owner) {
    if (!Ids.isTxId(txId)) {
      return TxException.invalid("txId", "expected tx- and 32 hex digits");
    }
    if (owner == null || owner.isEmpty()) {
      return TxException.invalid("owner", "is required");
    }
    String unclean = Identifiers.problem(owner);
    return unclean == null ? null : TxException.invalid("owner", unclean);
  }


  /** Redis not answering becomes a refusal a client can act on (503); anything else stays what it is. */
  static <T> Future<T> asRefusal(Throwable e) {
    return Future.failedFuture(e instanceof RedisUnavailable ? unavailable(e) : e);
  }

  public static TxException unavailable(Throwable cause) {
    if (cause instanceof RedisUnavailable.Full) {
      return TxException.redisFull(cause.getMessage(), null, 1);
    }
    return new TxException(Kind.UNAVAILABLE, cause.getMessage(), null, null);
  }
}
