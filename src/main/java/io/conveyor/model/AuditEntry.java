package io.conveyor.model;

import io.vertx.core.json.JsonObject;
import java.time.Instant;

/**
 * One admin act (README, Audit log): when, who (the key's id and owner, never the key), what (the route's method
 * and template: a stable action name), on what (the route's path parameters), from where (remote address, and via:
 * http, bus, bridge or cli), how it ended (ok, refused or failed; the status code and the problem type) and a summary
 * of the request (its query parameters, the body's size and top-level field names; never a payload). id is the
 * archive's sequence, 0 before it is stored.
 */
public record AuditEntry(long id, long at, String keyId, String owner, String action, String target, String outcome,
                         int status, String error, String remote, String via, String node, JsonObject params) {
  /** The outcome of a status code: ok below 400, refused for 4xx, failed for 5xx. */
  public static String outcome(int status) {
    return status < 400 ? "ok" : status < 500 ? "refused" : "failed";
  }

  /** The key id of an API key's SHA-256 (hex): its first 12 digits, enough to tell keys apart, useless to forge one. */
  public static String keyId(String sha256) {
    return sha256 == null ? "" : sha256.substring(0, Math.min(12, sha256.length()));
  }

  /** Text as the audit table holds it: no control characters, at most 256 characters. */
  public static String clean(String s) {
    if (s == null) {
      return "";
    }
    String c = s.replaceAll("\\p{Cntrl}", "?");
    return c.length() <= 256 ? c : c.substring(0, 256) + "…";
  }

  /** The same entry with the archive's id. */
  public AuditEntry withId(long stored) {
    return new AuditEntry(stored, at, keyId, owner, action, target, outcome, status, error, remote, via, node, params);
  }

  public JsonObject toJson() {
    JsonObject j = new JsonObject();
    if (id > 0) {
      j.put("id", id);
    }
    return j.put("time", Instant.ofEpochMilli(at).toString()).put("keyId", keyId).put("owner", owner)
        .put("action", action).put("target", target).put("outcome", outcome).put("status", status)
        .put("error", error).put("remote", remote).put("via", via).put("node", node).put("params", params);
  }

  public static AuditEntry fromJson(JsonObject j) {
    return new AuditEntry(j.getLong("id", 0L), Instant.parse(j.getString("time")).toEpochMilli(),
        j.getString("keyId", ""), j.getString("owner", ""), j.getString("action", ""), j.getString("target", ""),
        j.getString("outcome", ""), j.getInteger("status", 0), j.getString("error"), j.getString("remote", ""),
        j.getString("via", ""), j.getString("node", ""), j.getJsonObject("params", new JsonObject()));
  }
}
