package io.conveyor.api;

import io.conveyor.config.Config;
import io.conveyor.database.ArchiveStore;
import io.conveyor.domain.Transactions;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.ReadStore;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * GET /health/live and /health/ready: whether the node is up, and whether it can serve (each check says why not).
 * archive is null on a node without one; pipelineFiles are the pipelines this node published at start (readiness
 * checks they are in Redis); clusterState is the "cluster" check: ok, not joined, or held after a pause. partitions
 * is this node's view of each partition's Redis (see PartitionView): degraded while a minority are not ok.
 */
public record HealthRoutes(StoreContext redis, Transactions tx, Config.Redis settings, ArchiveStore archive,
                           ArchiveAdmin archiveAdmin, List<String> pipelineFiles, Supplier<String> clusterState)
    implements RouteGroup {
  private static final Logger log = LoggerFactory.getLogger(HealthRoutes.class);

  @Override
  public void mount(Router r) {
    r.get("/health/live").handler(ctx -> ctx.json(new JsonObject().put("status", "up")));
    r.get("/health/ready").handler(ctx -> ready().onSuccess(checks -> {
      // an archive that lags, or a Redis too full for new starts, is a warning, not a reason to take every node
      // out of service: all of them share both, and reads, cancels and running work still need a node
      boolean ok = checks.stream().allMatch(c -> "ok".equals(c.getString("result"))
          || c.getString("result").startsWith("lagging") || c.getString("result").startsWith("full"));
      // a minority of partitions failing leaves the node degraded but serving: starts go to the partitions that
      // answer, and reads and running work of the others go on (issue 36)
      PartitionView.Verdict partitions = PartitionView.verdict(redis.health());
      String status = !ok || partitions == PartitionView.Verdict.NOT_READY ? "not ready"
          : partitions == PartitionView.Verdict.DEGRADED ? "degraded" : "ready";
      JsonObject body = new JsonObject().put("status", status);
      checks.forEach(c -> body.put(c.getString("check"), c.getString("result")));
      body.put("partitions", PartitionView.readiness(redis.health(), redis.clock()));
      ctx.response().setStatusCode("not ready".equals(status) ? 503 : 200).putHeader("content-type", "application/json")
          .end(body.encode());
    }));
  }

  /** Each readiness check as {check, result}: "ok", or what is wrong. A failing check never fails the list. */
  private Future<List<JsonObject>> ready() {
    ReadStore reads = new ReadStore(redis);
    int scripts = redis.scripts().all().size();
    List<Future<JsonObject>> checks = List.of(
        // above redis.memoryHighWater Redis answers, but takes no starts: "full", and redisMemory says why
        check("redis", reads.ping().map(v -> tx.memory().fullest() == null ? "ok" : "full")),
        check("redisMemory", Future.succeededFuture(RedisMemoryView.readiness(tx.memory(), settings.memory()))),
        check("scripts", scriptsReady(reads, scripts)),
        // a node held after a pause takes no work until its cluster view is whole again: not ready meanwhile
        check("cluster", Future.succeededFuture(clusterState.get())),
        // the archive answers reads of finished transactions: a node that cannot reach it is not ready
        check("archive", archiveAdmin.readiness(archive == null ? Future.succeededFuture("ok")
            : archive.find("tx-" + "0".repeat(32)).map(none -> "ok").timeout(2, TimeUnit.SECONDS))),
        check("pipelines", new PipelineStore(redis).pipelines().map(all -> {
          List<String> missing = pipelineFiles.stream().filter(n -> !all.containsKey(n)).toList();
          return missing.isEmpty() ? "ok" : "not uploaded: " + missing;
        })));
    return Future.join(checks).transform(ar -> Future.succeededFuture(checks.stream()
        .map(f -> f.succeeded() ? f.result() : new JsonObject().put("result", "failed")).toList()));
  }

  /**
   * A Redis that restarted has lost its script cache: the scripts are loaded now rather than reported
   * missing for minutes (and that is logged; the check is ok once they are loaded). A Redis Cluster keeps a
   * cache per server and the client sends a keyless SCRIPT command to any one of them, replicas included,
   * so there it says nothing: each master is given a script's source on its first use (NOSCRIPT, then EVAL).
   */
  private Future<String> scriptsReady(ReadStore reads, int scripts) {
    if (settings.mode() == Config.RedisMode.CLUSTER) {
      return Future.succeededFuture("ok");
    }
    return reads.scriptsLoaded().compose(n -> n == scripts ? Future.succeededFuture("ok")
        : redis.scripts().loadAll(redis.link()).map(v -> {
          log.info("readiness: {} of {} Lua scripts were missing in Redis (it restarted?); loaded again",
              scripts - n, scripts);
          return "ok";
        }));
  }

  private static Future<JsonObject> check(String name, Future<String> result) {
    return result.recover(e -> Future.succeededFuture(String.valueOf(e.getMessage())))
        .map(r -> new JsonObject().put("check", name).put("result", r));
  }
}
