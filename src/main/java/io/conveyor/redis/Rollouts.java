package io.conveyor.redis;

import static io.conveyor.redis.Replies.str;

import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import java.time.Instant;
import java.util.List;

/**
 * A pipeline's rollout (lua/lib/rollout.lua): its state as pipelineH holds it, and promote or rollback
 * (rollout.lua), each then copied into every partition, where start.lua reads it.
 */
public final class Rollouts extends Store {
  private final PipelineStore pipelines;

  public Rollouts(StoreContext r) {
    super(r);
    this.pipelines = new PipelineStore(r);
  }

  /**
   * {name, version (what new starts run on, the canary during a rollout), state (canary, promoted, rolledback or
   * none), stable and share (during a rollout), canary and at (the last rollout's)}; NOT_FOUND when no pipeline.
   */
  public Future<JsonObject> state(String name) {
    return r.send(Request.cmd(Command.HMGET).arg(keys.pipelineH(name)).arg("version").arg("stable").arg("share")
        .arg("rollout").arg("canary").arg("rolloutAt")).compose(p -> {
          if (p.get(0) == null) {
            return Future.failedFuture(new TxException(Kind.NOT_FOUND, "no pipeline " + name, null, null));
          }
          JsonObject out = new JsonObject().put("name", name).put("version", str(p.get(0)))
              .put("state", p.get(3) == null ? "none" : str(p.get(3)));
          if (p.get(1) != null) {
            out.put("stable", str(p.get(1))).put("share", Integer.parseInt(str(p.get(2))));
          }
          if (p.get(4) != null) {
            out.put("canary", str(p.get(4)));
          }
          if (p.get(5) != null) {
            out.put("at", Instant.ofEpochMilli(Long.parseLong(str(p.get(5)))).toString());
          }
          return Future.succeededFuture(out);
        });
  }

  /** promote or rollback (rollout.lua); answers the state after it. */
  public Future<JsonObject> act(String name, String action) {
    return r.run(r.scripts().rollout, List.of(keys.pipelineH(name)), List.of(action, r.now())).compose(reply -> {
      Code code = Code.of(reply);
      if (code == Code.NOT_FOUND) {
        return Future.failedFuture(new TxException(Kind.NOT_FOUND, "no pipeline " + name, null, null));
      }
      if (code == Code.NO_ROLLOUT) {
        String last = reply.get(1).toString();
        return Future.failedFuture(new TxException(Kind.NO_ROLLOUT, "pipeline " + name + " has no rollout under way"
            + (last.isEmpty() ? "" : " (its last one was " + last + ")") + ": upload a version with \"rollout\": "
            + "{\"share\": n} first", null, null));
      }
      return pipelines.copy(name).compose(v -> state(name)).compose(s -> logged(r, name, new JsonObject()
          .put("action", action).put("version", s.getString("version")).put("canary", s.getString("canary")))
          .map(s));
    });
  }

  /** A pipeline-rollout event on partition 0's eventsL (rollout-event.lua): details plus the pipeline's name. */
  static Future<Void> logged(StoreContext r, String name, JsonObject details) {
    return r.run(r.scripts().rolloutEvent, List.of(r.keys().eventsL(0)), List.of(r.now(), name,
        details.put("pipeline", name).encode())).mapEmpty();
  }

  /** put-pipeline.lua's ROLLOUT_REFUSED (why) as a 400 naming the field rollout. */
  static TxException refused(String name, String why) {
    String problem;
    if (why.equals("no-previous")) {
      problem = "pipeline " + name + " has no previous version to keep as the stable one: publish it without "
          + "rollout first";
    } else if (why.startsWith("group:")) {
      problem = "the stable version runs in node group " + why.substring(6) + ": a canary must run in the same group";
    } else if (why.equals("stable")) {
      problem = "this is the stable version of the rollout under way: promote or roll back instead";
    } else {
      problem = "both versions must be transaction types (transactionType true)";
    }
    return TxException.invalid("rollout", problem);
  }
}
