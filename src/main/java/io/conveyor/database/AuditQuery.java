package io.conveyor.database;

import java.util.List;
import java.util.function.IntFunction;

/**
 * A page of the audit log, newest first: entries at or after from and before to (ms, null for no bound), of a key
 * id, an owner, an action, a target and an outcome (each null for any), with an id below beforeId (the cursor: the
 * last id of the page before), at most limit.
 */
public record AuditQuery(Long from, Long to, String keyId, String owner, String action, String target,
                         String outcome, Long beforeId, int limit) {

  /** The WHERE clause (from " WHERE true") with its parameters added, each placeholder made by the dialect. */
  String where(List<Object> params, IntFunction<String> placeholder) {
    StringBuilder w = new StringBuilder(" WHERE true");
    if (from != null) {
      params.add(ArchiveStore.timestamp(from));
      w.append(" AND at >= ").append(placeholder.apply(params.size()));
    }
    if (to != null) {
      params.add(ArchiveStore.timestamp(to));
      w.append(" AND at < ").append(placeholder.apply(params.size()));
    }
    equal(w, params, placeholder, "key_id", keyId);
    equal(w, params, placeholder, "owner", owner);
    equal(w, params, placeholder, "action", action);
    equal(w, params, placeholder, "target", target);
    equal(w, params, placeholder, "outcome", outcome);
    if (beforeId != null) {
      params.add(beforeId);
      w.append(" AND id < ").append(placeholder.apply(params.size()));
    }
    params.add(limit);
    return w.append(" ORDER BY id DESC LIMIT ").append(placeholder.apply(params.size())).toString();
  }

  private static void equal(StringBuilder w, List<Object> params, IntFunction<String> placeholder, String column,
                            String value) {
    if (value != null) {
      params.add(NulSafe.column(value));
      w.append(" AND ").append(column).append(" = ").append(placeholder.apply(params.size()));
    }
  }
}
