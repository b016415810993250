package io.conveyor.domain;

import io.conveyor.model.TxException;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.PipelineStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.Map;

/** Which node groups exist: those a pipeline names and those a live node serves (what GET /api/v1/cluster lists). */
public final class Groups {
  private Groups() {
  }

  /** Whether a pipeline names the group or a live node serves it. */
  public static Future<Boolean> known(LivenessStore liveness, PipelineStore pipelines, String group) {
    return Future.all(liveness.nodes(), pipelines.pipelines()).map(f -> {
      Map<String, JsonObject> nodes = f.resultAt(0);
      JsonObject all = f.resultAt(1);
      return nodes.values().stream().anyMatch(n -> group.equals(n.getString("group")))
          || all.stream().anyMatch(e -> e.getValue() instanceof JsonObject p && group.equals(p.getString("nodeGroup")));
    });
  }

  /** The refusal of an action on a group nobody has: a typo must not answer "paused" while the real group runs. */
  public static TxException unknown(String group) {
    return new TxException(TxException.Kind.NOT_FOUND, "no node group " + group
        + ": no pipeline names it and no live node serves it; check the name (GET /api/v1/cluster lists the groups)",
        "group", null);
  }
}
