package io.conveyor.model;

import io.vertx.core.json.JsonObject;

/** A refusal a client can act on: a stable kind, a message, and where it applies the field or txId at fault. */
public final class TxException extends RuntimeException {

  /** Kinds of refusal; type is stable on every interface, status is the HTTP status and event-bus code. */
  public enum Kind {
    INVALID_INPUT("invalid-input", 400),
    TOO_LARGE("too-large", 413),
    UNKNOWN_TYPE("unknown-type", 404),
    NOT_STARTABLE("not-startable", 400),
    DUPLICATE_EXTERNAL_ID("duplicate-external-id", 409),
    NOT_FOUND("not-found", 404),
    ALREADY_FINAL("already-final", 409),
    NOT_RERUNNABLE("not-rerunnable", 409),
    /** A resume of a transaction that is not paused (pause.lua, resume.lua). */
    NOT_PAUSED("not-paused", 409),
    PIPELINE_DISABLED("pipeline-disabled", 409),
    PIPELINE_IN_USE("pipeline-in-use", 409),
    /** A promote or rollback of a pipeline with no rollout under way (lua/rollout.lua). */
    NO_ROLLOUT("no-rollout", 409),
    UNAVAILABLE("unavailable", 503),
    /** Redis is near or at its memory limit: new starts wait (Retry-After) while running work frees memory. */
    REDIS_MEMORY("redis-memory", 503),
    /** The one partition a start is bound to (externalId, gate) is failing: its Redis master does not answer. */
    PARTITION_UNAVAILABLE("partition-unavailable", 503),
    UNAUTHORIZED("unauthorized", 401),
    FORBIDDEN("forbidden", 403),
    UNSUPPORTED_MEDIA_TYPE("unsupported-media-type", 415),
    RATE_LIMITED("rate-limited", 429),
    /** The owner has limits.maxLive (or its own maxLive) transactions live: a start waits until some end. */
    LIVE_LIMIT("live-limit", 429),
    /** A throttle gate that refuses had its limit of starts in the period for that key (Retry-After: when it frees). */
    THROTTLED("throttled", 429),
    /** A singleton gate that refuses has a live transaction for that key (txId names it). */
    GATE_BUSY("gate-busy", 409),
    /** A bug, not the client's doing: the errorId names the one log line that has the details. */
    INTERNAL("internal", 500);

    public final String type;
    public final int status;

    Kind(String type, int status) {
      this.type = type;
      this.status = status;
    }
  }

  private final Kind kind;
  private final String field;
  private final String txId;
  private final String errorId;
  /** Seconds a client should wait before it asks again (Retry-After); 0 when the refusal says nothing of it. */
  private int retryAfter;

  public TxException(Kind kind, String message, String field, String txId) {
    this(kind, message, field, txId, null);
  }

  private TxException(Kind kind, String message, String field, String txId, String errorId) {
    super(message, null, false, false);
    this.kind = kind;
    this.field = field;
    this.txId = txId;
    this.errorId = errorId;
  }

  /** An unexpected failure, as a client is told of it: the errorId is in the node's ERROR log line too. */
  public static TxException internal(String errorId) {
    return new TxException(Kind.INTERNAL, "an unexpected error happened on the node; its log names it errorId "
        + errorId, null, null, errorId);
  }

  /** Redis is full: starts are refused for now; retry after that many seconds. */
  public static TxException redisFull(String message, String txId, int retryAfterSeconds) {
    TxException e = new TxException(Kind.REDIS_MEMORY, message, null, txId, null);
    e.retryAfter = retryAfterSeconds;
    return e;
  }

  /** A start bound to a failing partition waited for it in vain: retry after that many seconds (Retry-After). */
  public static TxException partitionUnavailable(String message, int retryAfterSeconds) {
    TxException e = new TxException(Kind.PARTITION_UNAVAILABLE, message, null, null, null);
    e.retryAfter = Math.max(1, retryAfterSeconds);
    return e;
  }

  /** A throttle gate refused a start: a slot for its key frees in that many seconds (Retry-After). */
  public static TxException throttled(String message, int retryAfterSeconds) {
    TxException e = new TxException(Kind.THROTTLED, message, "throttle", null, null);
    e.retryAfter = Math.max(1, retryAfterSeconds);
    return e;
  }

  public int retryAfter() {
    return retryAfter;
  }

  public static TxException invalid(String field, String problem) {
    return new TxException(Kind.INVALID_INPUT, field + ": " + problem, field, null);
  }

  public static TxException tooLarge(String field, int size, int max) {
    return new TxException(Kind.TOO_LARGE, field + ": " + size + " bytes is over the limit of " + max, field, null);
  }

  public Kind kind() {
    return kind;
  }

  public String field() {
    return field;
  }

  public String txId() {
    return txId;
  }

  public String errorId() {
    return errorId;
  }

  /** The wire form: the event bus's failure message, and the body of problem+json. */
  public JsonObject toJson() {
    JsonObject j = new JsonObject().put("type", kind.type).put("status", kind.status).put("detail", getMessage());
    if (field != null) {
      j.put("field", field);
    }
    if (txId != null) {
      j.put("txId", txId);
    }
    if (errorId != null) {
      j.put("errorId", errorId);
    }
    if (retryAfter > 0) {
      j.put("retryAfter", retryAfter);
    }
    return j;
  }

  public static TxException fromJson(JsonObject j) {
    for (Kind k : Kind.values()) {
      if (k.type.equals(j.getString("type"))) {
        TxException e = new TxException(k, j.getString("detail"), j.getString("field"), j.getString("txId"),
            j.getString("errorId"));
        e.retryAfter = j.getInteger("retryAfter", 0);
        return e;
      }
    }
    throw new IllegalArgumentException("not a Conveyor error: " + j.encode());
  }
}
