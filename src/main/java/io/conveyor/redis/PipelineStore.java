package io.conveyor.redis;

import static io.conveyor.redis.Replies.str;

import io.conveyor.model.PipelineSource;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Published pipelines: every version kept, the current one per name, and the group each runs in. */
public final class PipelineStore extends Store implements PipelineSource {
  public PipelineStore(StoreContext r) {
    super(r);
  }

  /**
   * Publishes a version made at publishedAt (ms): it becomes current unless a newer publication is (see
   * put-pipeline.lua); its definition is stored either way. With several partitions, the current version is
   * then copied into each (see copy).
   */
  @Override
  public Future<Published> putPipeline(String name, String version, String group, boolean transactionType,
                                       String definition, String onFailure, int priority, double ratePerSecond,
                                       int maxConcurrency, String gate, long publishedAt, int rolloutShare) {
    return r.run(r.scripts().putPipeline, List.of(keys.pipelineH(name), keys.pipelineVersionsH(name),
            keys.pipelinesS()), List.of(version, group, transactionType ? "1" : "0", definition, r.now(), name,
            onFailure == null ? "" : onFailure, Long.toString(publishedAt), Integer.toString(priority),
            ratePerSecond > 0 ? Double.toString(ratePerSecond) : "", maxConcurrency > 0
                ? Integer.toString(maxConcurrency) : "", gate == null ? "" : gate,
            rolloutShare > 0 ? Integer.toString(rolloutShare) : ""))
        .compose(reply -> Code.of(reply) == Code.ROLLOUT_REFUSED
            ? Future.failedFuture(Rollouts.refused(name, reply.get(1).toString()))
            : Future.succeededFuture(Code.of(reply) == Code.KEPT ? new Published(false, reply.get(1).toString())
                : new Published(reply.get(1).toInteger() == 1, null)))
        .compose(p -> copy(name).map(p))
        .compose(p -> rolloutShare > 0 && p.changed() ? Rollouts.logged(r, name, new io.vertx.core.json.JsonObject()
            .put("action", "canary").put("version", version).put("share", rolloutShare)).map(p)
            : Future.succeededFuture(p));
  }

  /**
   * Copies a pipeline's current version (as the cluster-wide pipelineH holds it) into every partition, where
   * start and hop read it; nothing to do with one partition. Copies are idempotent and never go back in time,
   * so a node may copy again whenever it doubts them (after Redis failed over or came back).
   */
  public Future<Void> copy(String name) {
    if (keys.partitions() == 1) {
      return Future.succeededFuture();
    }
    return r.send(Request.cmd(Command.HMGET).arg(keys.pipelineH(name)).arg("version").arg("nodeGroup")
        .arg("isTransactionType").arg("updated").arg("onFailure").arg("disabled").arg("priority").arg("rate")
        .arg("cap").arg("gate").arg("stable").arg("share").arg("stableOnFailure"))
        .compose(p -> {
          if (p.get(0) == null) {
            return Future.succeededFuture();
          }
          List<String> args = List.of(str(p.get(0)), str(p.get(1)), str(p.get(2)),
              p.get(3) == null ? "0" : str(p.get(3)), p.get(4) == null ? "" : str(p.get(4)),
              "1".equals(str(p.get(5))) ? "1" : "0", p.get(6) == null ? "0" : str(p.get(6)),
              p.get(7) == null ? "" : str(p.get(7)), p.get(8) == null ? "" : str(p.get(8)),
              p.get(9) == null ? "" : str(p.get(9)), p.get(10) == null ? "" : str(p.get(10)),
              p.get(11) == null ? "" : str(p.get(11)), p.get(12) == null ? "" : str(p.get(12)));
          List<Future<Response>> copies = new ArrayList<>();
          for (int part : keys.all()) {
            copies.add(r.run(r.scripts().pipelineCopy, List.of(keys.pipelineInPartitionH(part, name)), args));
          }
          return Future.all(copies).mapEmpty();
        });
  }

  /** Disables a pipeline (new starts refused) or enables it again; false when there is no such pipeline. */
  public Future<Boolean> setDisabled(String name, boolean disabled) {
    return r.run(r.scripts().pipelineState, List.of(keys.pipelineH(name)), List.of(disabled ? "1" : "0", r.now()))
        .compose(reply -> reply.toInteger() == 1 ? copy(name).map(true) : Future.succeededFuture(false));
  }

  /**
   * Deletes a pipeline: its current version, its partition copies and its name. Its versions stay readable,
   * for transactions that still run on them and for the archive.
   */
  public Future<Void> delete(String name) {
    List<Future<Response>> dels = new ArrayList<>();
    dels.add(r.send(Request.cmd(Command.DEL).arg(keys.pipelineH(name))));
    if (keys.partitions() > 1) {
      for (int part : keys.all()) {
        dels.add(r.send(Request.cmd(Command.DEL).arg(keys.pipelineInPartitionH(part, name))));
      }
    }
    return Future.all(dels).compose(v -> r.send(Request.cmd(Command.SREM).arg(keys.pipelinesS()).arg(name)))
        .mapEmpty();
  }

  /** Copies every published pipeline into every partition (see copy). */
  public Future<Void> copyAll() {
    return copyEach(keys.pipelinesS(), this::copy);
  }

  /** The definition JSON of one version of a pipeline, or null. */
  @Override
  public Future<String> pipelineDefinition(String name, String version) {
    return r.send(Request.cmd(Command.HGET).arg(keys.pipelineVersionsH(name)).arg(version)).map(Replies::str);
  }

  /**
   * Every stored version of a pipeline: version → {definition (JSON text), publishedAt (ms, when it was first
   * published; absent for versions stored before that was kept)}; empty when the pipeline never was.
   */
  public Future<java.util.Map<String, JsonObject>> versions(String name) {
    return r.send(Request.cmd(Command.HGETALL).arg(keys.pipelineVersionsH(name))).map(reply -> {
      java.util.Map<String, JsonObject> out = new java.util.TreeMap<>();
      Replies.hash(reply, (k, v) -> {
        boolean at = k.startsWith("at:");
        JsonObject entry = out.computeIfAbsent(at ? k.substring(3) : k, x -> new JsonObject());
        if (at) {
          entry.put("publishedAt", Long.parseLong(v.toString()));
        } else {
          entry.put("definition", v.toString());
        }
      });
      out.values().removeIf(e -> !e.containsKey("definition"));
      return out;
    });
  }

  /** A pipeline's node group and gate (pipelineH fields nodeGroup and gate; "" for none), or null when none. */
  @Override
  public Future<String[]> pipelineStart(String name) {
    return r.send(Request.cmd(Command.HMGET).arg(keys.pipelineH(name)).arg("nodeGroup").arg("gate"))
        .map(g -> g.get(0) == null ? null : new String[] {str(g.get(0)), g.get(1) == null ? "" : str(g.get(1))});
  }

  /** The node group a pipeline currently belongs to, or null when there is no such pipeline. */
  @Override
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
            .arg("isTransactionType").arg("definition").arg("disabled")));
      }
      return Future.all(reads).map(all -> {
        JsonObject out = new JsonObject();
        for (int i = 0; i < sorted.size(); i++) {
          Response p = all.resultAt(i);
          if (p.get(0) != null) {
            out.put(sorted.get(i), new JsonObject().put("version", str(p.get(0))).put("nodeGroup", str(p.get(1)))
                .put("transactionType", "1".equals(str(p.get(2)))).put("definition", new JsonObject(str(p.get(3))))
                .put("disabled", "1".equals(str(p.get(4)))));
          }
        }
        return out;
      });
    });
  }
}
