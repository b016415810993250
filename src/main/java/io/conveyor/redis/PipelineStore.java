package io.conveyor.redis;

import static io.conveyor.redis.Replies.str;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Published pipelines: every version kept, the current one per name, and the group each runs in. */
public final class PipelineStore {
  private final StoreContext r;
  private final Keys keys;

  public PipelineStore(StoreContext r) {
    this.r = r;
    this.keys = r.keys();
  }

  /** Publishes a pipeline version; true when it became the current one. */
  public Future<Boolean> putPipeline(String name, String version, String group, boolean transactionType,
                                     String definition) {
    return r.run(r.scripts().putPipeline, List.of(keys.pipelineH(name), keys.pipelineVersionsH(name),
            keys.pipelinesS()), List.of(version, group, transactionType ? "1" : "0", definition, r.now(), name))
        .map(reply -> reply.get(1).toInteger() == 1);
  }

  /** The definition JSON of one version of a pipeline, or null. */
  public Future<String> pipelineDefinition(String name, String version) {
    return r.send(Request.cmd(Command.HGET).arg(keys.pipelineVersionsH(name)).arg(version)).map(Replies::str);
  }

  /** The node group a pipeline currently belongs to, or null when there is no such pipeline. */
  public Future<String> pipelineGroup(String name) {
    return r.send(Request.cmd(Command.HGET).arg(keys.pipelineH(name)).arg("nodeGroup")).map(Replies::str);
  }

  /** Every pipeline's current version: {name: {version, nodeGroup, transactionType, definition}}. */
  public Future<JsonObject> pipelines() {
    return r.send(Request.cmd(Command.SMEMBERS).arg(keys.pipelinesS())).compose(names -> {
      List<String> sorted = new ArrayList<>();
      names.forEach(n -> sorted.add(n.toString()));
      Collections.sort(sorted);
      List<Future<Response>> reads = new ArrayList<>();
      for (String n : sorted) {
        reads.add(r.send(Request.cmd(Command.HMGET).arg(keys.pipelineH(n)).arg("version").arg("nodeGroup")
            .arg("isTransactionType").arg("definition")));
      }
      return Future.all(reads).map(all -> {
        JsonObject out = new JsonObject();
        for (int i = 0; i < sorted.size(); i++) {
          Response p = all.resultAt(i);
          if (p.get(0) != null) {
            out.put(sorted.get(i), new JsonObject().put("version", str(p.get(0))).put("nodeGroup", str(p.get(1)))
                .put("transactionType", "1".equals(str(p.get(2)))).put("definition", new JsonObject(str(p.get(3)))));
          }
        }
        return out;
      });
    });
  }
}
