package io.conveyor.database;

import io.conveyor.model.TxSummary;
import io.vertx.core.json.JsonObject;

/**
 * A finished transaction as the archive keeps it: the columns it is searched by, and the full state (every
 * field of its stateH, as Redis held them) from which its summary is rebuilt.
 */
public record ArchivedTx(String txId, String owner, String externalId, String type, String status, long created,
                         Long completed, JsonObject state, JsonObject webhook) {

  /** From the fields of a stateH, as archive.lua hands them out. */
  public static ArchivedTx fromState(String txId, JsonObject state) {
    String ext = state.getString("externalId");
    String completed = state.getString("completed");
    String webhook = state.getString("webhook");
    return new ArchivedTx(txId, state.getString("owner"), ext == null || ext.isEmpty() ? null : ext,
        state.getString("type"), state.getString("status"), Long.parseLong(state.getString("created")),
        completed == null || completed.isEmpty() ? null : Long.valueOf(completed), state,
        webhook == null || webhook.isEmpty() ? null : new JsonObject(webhook));
  }

  /**
   * The stamp of the state: its updated time and rev (raised by every change to a finished transaction). A
   * write with an older stamp never replaces a newer row.
   */
  public long stampUpdated() {
    String u = state.getString("updated");
    return u == null || u.isEmpty() ? 0 : Long.parseLong(u);
  }

  public long stampRev() {
    String r = state.getString("rev");
    return r == null || r.isEmpty() ? 0 : Long.parseLong(r);
  }

  /**
   * The summary, by the same mapping as a read from Redis; the webhook column (written when a delivery
   * ends after archiving) wins over the state's copy.
   */
  public TxSummary summary() {
    return TxSummary.fromState(txId, f -> f.equals("webhook") && webhook != null ? webhook.encode()
        : state.getString(f));
  }
}
