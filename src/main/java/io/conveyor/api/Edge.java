package io.conveyor.api;

import io.conveyor.model.TxException;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.PipelineStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.function.Function;

/** Checks at the edge that several ways in share: whose transaction a body may name, which groups exist. */
final class Edge {
  /** Retry-After of a start refused live-limit (seconds): when an owner's transactions end is not known. */
  static final String LIVE_LIMIT_RETRY_AFTER = "5";

  private Edge() {
  }

  /**
   * The body, when the owner it names (if any) is the key's: a key acts for its own owner only, and a different
   * owner is refused rather than silently replaced, so a client that meant another tenant learns it.
   */
  static Future<JsonObject> ownedBy(JsonObject body, String keyOwner) {
    String refused = ownerRefusal(body, keyOwner);
    return refused == null ? Future.succeededFuture(body)
        : Future.failedFuture(new TxException(TxException.Kind.FORBIDDEN, refused, "owner", null));
  }

  /** Why a body's owner may not be used with a key of keyOwner, or null when it may (absent, or the same). */
  static String ownerRefusal(JsonObject body, String keyOwner) {
    Object named = body == null ? null : body.getValue("owner");
    if (named == null || named.equals(keyOwner)) {
      return null;
    }
    return "owner: this key acts for owner " + keyOwner + " only, not " + named
        + "; leave owner out or use a key of that owner";
  }

  /** The limits in force (README, Limits), as GET /api/v1/cluster shows them; an owner's own are in its view. */
  static JsonObject limits(io.conveyor.config.Config config) {
    io.conveyor.config.Config.Limits l = config.limits();
    return new JsonObject().put("maxBodyBytes", config.http().maxBodyBytes())
        .put("maxInputBytes", config.transactions().maxInputBytes())
        .put("maxMetadataBytes", config.transactions().maxMetadataBytes())
        .put("startRate", config.http().startRate()).put("startBurst", config.http().startBurst())
        .put("maxWait", config.http().maxWait().toSeconds())
        .put("maxLive", l.maxLive()).put("maxPayloadBytes", l.maxPayloadBytes()).put("maxErrors", l.maxErrors())
        .put("maxDepth", l.maxDepth()).put("maxDescendants", l.maxDescendants());
  }

  /** Whether a node group exists: a pipeline names it, or a live node serves it. */
  static Function<String, Future<Boolean>> groupKnown(LivenessStore liveness, PipelineStore pipelines) {
    return group -> io.conveyor.domain.Groups.known(liveness, pipelines, group);
  }
}
