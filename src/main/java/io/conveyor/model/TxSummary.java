package io.conveyor.model;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;

/**
 * What a client learns of a transaction. Times are absent until they happen; output only once final. retry
 * (or null) is the step attempt a retry policy has scheduled or runs; errors (or null) the failed attempts;
 * runs (or null) the earlier runs of a transaction run again (retry); compensation (or null) its onFailure
 * pipeline's run: {txId, pipeline, status}; startAt (or null) when a delayed start was to begin; gate (or null)
 * the gate its start passed or waited on (stateH field gate, lib/gate.lua; debounced: true on the answer to a start
 * that was folded into it); paused (or null) the pause that holds it (pause.lua: {since in ms, by, reason, root,
 * tree}), shown while it has not ended.
 */
public record TxSummary(String txId, String owner, String externalId, String type, TxStatus status,
                        String processingState, long attempt, Instant created, Instant updated, Instant completed,
                        JsonObject metadata, JsonObject output, String note, JsonObject progressReport,
                        JsonObject webhook, JsonObject retry, JsonArray errors, JsonArray runs,
                        JsonObject compensation, Instant startAt, JsonObject gate, JsonObject paused) {

  public TxSummary(String txId, String owner, String externalId, String type, TxStatus status,
                   String processingState, long attempt, Instant created, Instant updated, Instant completed,
                   JsonObject metadata, JsonObject output, String note, JsonObject progressReport,
                   JsonObject webhook) {
    this(txId, owner, externalId, type, status, processingState, attempt, created, updated, completed, metadata,
        output, note, progressReport, webhook, null, null, null, null, null, null, null);
  }

  /** As the canonical constructor, with no gate, not paused. */
  public TxSummary(String txId, String owner, String externalId, String type, TxStatus status,
                   String processingState, long attempt, Instant created, Instant updated, Instant completed,
                   JsonObject metadata, JsonObject output, String note, JsonObject progressReport,
                   JsonObject webhook, JsonObject retry, JsonArray errors, JsonArray runs,
                   JsonObject compensation, Instant startAt) {
    this(txId, owner, externalId, type, status, processingState, attempt, created, updated, completed, metadata,
        output, note, progressReport, webhook, retry, errors, runs, compensation, startAt, null, null);
  }

  public JsonObject toJson() {
    JsonObject j = new JsonObject()
        .put("txId", txId)
        .put("owner", owner)
        .put("externalId", externalId)
        .put("type", type)
        .put("status", status.wire())
        .put("processingState", processingState)
        .put("attempt", attempt)
        .put("created", time(created))
        .put("updated", time(updated))
        .put("completed", time(completed))
        .put("metadata", metadata)
        .put("progressReport", progressReport);
    if (webhook != null) {
      j.put("webhook", webhook);
    }
    if (retry != null && !status.isFinal()) {
      j.put("retry", retryView(retry, "sleeping".equals(processingState)));
    }
    if (errors != null && !errors.isEmpty()) {
      j.put("errors", errorsView(errors));
    }
    if (runs != null && !runs.isEmpty()) {
      j.put("runs", runsView(runs));
    }
    if (compensation != null) {
      j.put("compensation", compensation);
    }
    if (startAt != null) {
      j.put("startAt", startAt.toString());
    }
    if (gate != null) {
      j.put("gate", gateView(gate));
      if (gate.getBoolean("debounced", false)) {
        j.put("debounced", true);
      }
    }
    if (paused != null && !status.isFinal()) {
      j.put("paused", pausedView(paused));
    }
    if (status.isFinal()) {
      j.put("output", output);
      if (note != null) {
        j.put("note", note);
      }
    }
    return SealedView.hide(j);
  }

  /**
   * The stored retry view with its times as ISO-8601 text; nextAttemptAt only while the attempt waits (once
   * it runs, the time has passed).
   */
  private static JsonObject retryView(JsonObject stored, boolean waiting) {
    JsonObject v = stored.copy();
    Object due = v.remove("nextAttemptAt");
    if (waiting && due != null) {
      v.put("nextAttemptAt", due instanceof Number n ? Instant.ofEpochMilli(n.longValue()).toString() : due);
    }
    if (v.getValue("lastError") instanceof JsonObject e) {
      v.put("lastError", errorView(e));
    }
    return v;
  }

  /** Earlier runs ({status, note, step, completed in ms, webhook?}) with completed as ISO-8601 text. */
  private static JsonArray runsView(JsonArray stored) {
    JsonArray out = new JsonArray();
    stored.forEach(r -> {
      if (r instanceof JsonObject o && o.getValue("completed") instanceof Number n) {
        out.add(o.copy().put("completed", Instant.ofEpochMilli(n.longValue()).toString()));
      } else {
        out.add(r);
      }
    });
    return out;
  }

  /** The stored pause ({since in ms, by, reason, root, tree}) with since as ISO-8601 text and no empty reason. */
  private static JsonObject pausedView(JsonObject stored) {
    JsonObject v = stored.copy();
    if (v.getValue("since") instanceof Number n) {
      v.put("since", Instant.ofEpochMilli(n.longValue()).toString());
    }
    if ("".equals(v.getValue("reason"))) {
      v.remove("reason");
    }
    return v;
  }

  private static JsonArray errorsView(JsonArray stored) {
    JsonArray out = new JsonArray();
    stored.forEach(e -> out.add(e instanceof JsonObject o ? errorView(o) : e));
    return out;
  }

  /** A stored gate with its times as ISO-8601 text and its period and maxWait as durations (500ms, 10s). */
  private static JsonObject gateView(JsonObject stored) {
    JsonObject v = stored.copy();
    for (String t : new String[] {"startAt", "waited"}) {
      if (v.getValue(t) instanceof Number n) {
        v.put(t, Instant.ofEpochMilli(n.longValue()).toString());
      }
    }
    for (String d : new String[] {"period", "maxWait"}) {
      if (v.getValue(d) instanceof Number n) {
        v.put(d, Durations.format(java.time.Duration.ofMillis(n.longValue())));
      }
    }
    return v;
  }

  /** Whether this is the answer to a start a debounce folded into this (earlier) transaction. */
  public boolean debounced() {
    return gate != null && gate.getBoolean("debounced", false);
  }

  /** The same summary with another gate view. */
  public TxSummary withGate(JsonObject view) {
    return new TxSummary(txId, owner, externalId, type, status, processingState, attempt, created, updated, completed,
        metadata, output, note, progressReport, webhook, retry, errors, runs, compensation, startAt, view, paused);
  }

  /** A stored attempt error ({step, stepType, attempt, code, message, at in ms}) with at as ISO-8601 text. */
  private static JsonObject errorView(JsonObject stored) {
    JsonObject v = stored.copy();
    if (v.getValue("at") instanceof Number n) {
      v.put("at", Instant.ofEpochMilli(n.longValue()).toString());
    }
    return v;
  }

  private static String time(Instant t) {
    return t == null ? null : t.toString();
  }

  /** The inverse of toJson, for clients that read a summary off the wire. */
  public static TxSummary fromJson(JsonObject j) {
    return new TxSummary(j.getString("txId"), j.getString("owner"), j.getString("externalId"),
        j.getString("type"), TxStatus.fromWire(j.getString("status")), j.getString("processingState"),
        j.getLong("attempt", 0L), instant(j.getString("created")), instant(j.getString("updated")),
        instant(j.getString("completed")), j.getJsonObject("metadata"), j.getJsonObject("output"),
        j.getString("note"), j.getJsonObject("progressReport"), j.getJsonObject("webhook"), j.getJsonObject("retry"),
        j.getJsonArray("errors"), j.getJsonArray("runs"), j.getJsonObject("compensation"),
        instant(j.getString("startAt")), j.getJsonObject("gate"), j.getJsonObject("paused"));
  }

  /**
   * The summary from a transaction's stored fields (stateH, or the copy of it in the archive): the one
   * mapping both use, so a summary reads the same before and after archiving.
   */
  public static TxSummary fromState(String txId, java.util.function.Function<String, String> field) {
    return new TxSummary(txId, field.apply("owner"), blankToNull(field.apply("externalId")), field.apply("type"),
        TxStatus.fromWire(field.apply("status")), field.apply("processingState"),
        Long.parseLong(field.apply("attempt")), millis(field.apply("created")), millis(field.apply("updated")),
        millis(field.apply("completed")), object(field.apply("metadata")), object(field.apply("output")),
        blankToNull(field.apply("note")), object(field.apply("progress")), webhook(field),
        object(field.apply("retry")), array(field.apply("errors")), array(field.apply("runs")),
        object(field.apply("compensation")), millis(field.apply("startAt")), object(field.apply("gate")),
        object(field.apply("paused")));
  }

  /**
   * The webhook's delivery state: the stored one (field webhook, written when delivery ended), else, for a
   * transaction with a webhook URL that is still running, {url, status: waiting}.
   */
  private static JsonObject webhook(java.util.function.Function<String, String> field) {
    JsonObject stored = object(field.apply("webhook"));
    if (stored != null) {
      return webhookView(stored);
    }
    String url = blankToNull(field.apply("webhookUrl"));
    return url == null ? null : new JsonObject().put("url", url).put("status", "waiting");
  }

  /** A stored webhook state as a client sees it: times (stored in ms) as ISO-8601 text. */
  public static JsonObject webhookView(JsonObject stored) {
    JsonObject v = stored.copy();
    for (String t : new String[] {"nextAttempt", "lastAttempt", "deliveredAt"}) {
      if (v.getValue(t) instanceof Number n) {
        v.put(t, Instant.ofEpochMilli(n.longValue()).toString());
      }
    }
    return v;
  }

  /** The same summary with another webhook state. */
  public TxSummary withWebhook(JsonObject state) {
    return new TxSummary(txId, owner, externalId, type, status, processingState, attempt, created, updated, completed,
        metadata, output, note, progressReport, state, retry, errors, runs, compensation, startAt, gate, paused);
  }

  private static String blankToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  private static JsonObject object(String s) {
    return s == null || s.isEmpty() ? null : new JsonObject(s);
  }

  private static JsonArray array(String s) {
    return s == null || s.isEmpty() ? null : new JsonArray(s);
  }

  private static Instant millis(String s) {
    return s == null || s.isEmpty() ? null : Instant.ofEpochMilli(Long.parseLong(s));
  }

  private static Instant instant(String s) {
    return s == null ? null : Instant.parse(s);
  }
}
