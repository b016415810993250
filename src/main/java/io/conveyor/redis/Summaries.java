package io.conveyor.redis;

import static io.conveyor.redis.Replies.str;

import io.conveyor.model.TxSummary;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.util.List;

/** A transaction's summary from the stateH fields get-state.lua and webhook.lua read (lua/lib/summary.lua). */
final class Summaries {
  /** The fields, in the order lua/lib/summary.lua lists them (LuaFilesTest keeps the two equal). */
  static final List<String> STATE_FIELDS = List.of("owner", "externalId", "type", "version", "status",
      "processingState", "attempt", "created", "updated", "completed", "output", "note", "progress", "metadata",
      "step", "webhookUrl", "webhook", "retry", "errors", "runs", "compensation", "startAt", "gate",
      "paused");

  private Summaries() {
  }

  /** From a get-state.lua reply: the state fields, then the delivery state of its webhook. */
  static TxSummary fromGetState(String txId, Response reply) {
    JsonObject pending = pendingWebhook(str(reply.get(STATE_FIELDS.size())), reply, STATE_FIELDS.size() + 1);
    if (pending != null) {
      pending.put("url", str(reply.get(STATE_FIELDS.indexOf("webhookUrl"))));
    }
    return TxSummary.fromState(txId, name -> name.equals("webhook") && pending != null ? pending.encode()
        : str(reply.get(STATE_FIELDS.indexOf(name))));
  }

  /** From the state fields alone (webhook.lua hands them out with a delivery); null when there are none. */
  static TxSummary fromFields(String txId, Response fields) {
    return fields.size() == 0 ? null : TxSummary.fromState(txId, name -> {
      int at = STATE_FIELDS.indexOf(name);
      return at < 0 || at >= fields.size() ? null : str(fields.get(at));
    });
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
}
