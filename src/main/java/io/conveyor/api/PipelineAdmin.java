package io.conveyor.api;

import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.ReadStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pipeline's lifecycle, for admins: disable (new starts refused, what runs finishes), enable, delete (only
 * when none of its transactions is live, unless forced; its versions stay readable for what still runs and
 * for the archive). A node that starts with the pipeline's file publishes it again: remove the file too.
 */
final class PipelineAdmin {
  private static final Logger log = LoggerFactory.getLogger(PipelineAdmin.class);
  /** How many members of each set a delete looks through for live transactions. */
  private static final int LOOK_AT = 10_000;
  private final PipelineStore pipelines;
  private final ReadStore reads;

  PipelineAdmin(PipelineStore pipelines, ReadStore reads) {
    this.pipelines = pipelines;
    this.reads = reads;
  }

  Future<JsonObject> setDisabled(String name, boolean disabled) {
    return pipelines.setDisabled(name, disabled).compose(found -> {
      if (!found) {
        return Future.failedFuture(notFound(name));
      }
      log.info("pipeline {} {}", name, disabled ? "disabled: it takes no new starts" : "enabled");
      return Future.succeededFuture(new JsonObject().put("name", name).put("disabled", disabled));
    });
  }

  /**
   * Deletes a pipeline. It is disabled first, so no start slips in while its live transactions are counted;
   * with live ones (and no force) it stays disabled and the answer says how many.
   */
  Future<JsonObject> delete(String name, boolean force) {
    return pipelines.pipelineGroup(name).compose(group -> {
      if (group == null) {
        return Future.failedFuture(notFound(name));
      }
      return pipelines.setDisabled(name, true).compose(v -> force ? Future.succeededFuture(0)
              : reads.liveOf(name, group, LOOK_AT))
          .compose(live -> {
            if (live != 0) {
              return Future.failedFuture(new TxException(Kind.PIPELINE_IN_USE, "pipeline " + name + " has "
                  + (live < 0 ? "too many" : Integer.toString(live)) + " live transactions; it is disabled now, so "
                  + "they finish and none starts: delete it once they have, or with ?force=true", null, null));
            }
            return pipelines.delete(name).map(v -> {
              log.info("pipeline {} deleted{}", name, force ? " (forced)" : "");
              return new JsonObject().put("name", name).put("deleted", true);
            });
          });
    });
  }

  private static TxException notFound(String name) {
    return new TxException(Kind.NOT_FOUND, "no pipeline " + name, null, null);
  }
}
