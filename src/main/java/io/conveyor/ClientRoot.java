package io.conveyor;

import io.conveyor.config.Config;
import io.conveyor.database.ArchiveStore;
import io.conveyor.domain.Transactions;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.pipeline.PipelineParser;
import io.conveyor.pipeline.StepRegistry;
import io.conveyor.redis.Keys;
import io.conveyor.redis.LayoutStore;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.RedisLink;
import io.conveyor.redis.Replicas;
import io.conveyor.redis.ScriptMeter;
import io.conveyor.redis.Scripts;
import io.conveyor.redis.StoreContext;
import io.conveyor.time.Ticker;
import io.vertx.core.Vertx;
import java.time.Clock;

/**
 * The composition root of a client outside any node (the shell client, tools, tests): what Node builds for its
 * interfaces, built once from config for one Transactions service with a link of its own.
 */
public final class ClientRoot {
  private ClientRoot() {
  }

  /**
   * A Transactions on config's Redis and archive, meant for one thread or Vert.x context at a time. It checks the
   * keyspace's layout first (a client with another number of partitions would read the wrong keys), so call it
   * off the event loop; a mismatch throws ConfigException.
   */
  public static Transactions transactions(Vertx vertx, Config config) {
    RedisAccess redis = new RedisAccess(RedisLink.options(config.redis(), config.security().redisTls()),
        config.redis().timeout(),
        new Keys(config.redis().prefix(), config.redis().partitions()), new Scripts(), Clock.systemUTC(),
        Ticker.SYSTEM, ScriptMeter.NONE, new Replicas(config.redis().waitReplicas(), config.redis().waitTimeout()), config.limits(),
        // what the command line starts for an encrypted owner is sealed, and what it reads opened, as on a node
        io.conveyor.crypto.Encryption.fromConfig(config.security().encryption(), System.getenv(), Ticker.SYSTEM));
    StoreContext context = redis.open(vertx);
    // a failed TLS handshake names the settings to look at (exit 2), as a node's start does
    new LayoutStore(context).check().recover(e -> io.vertx.core.Future.failedFuture(
        io.conveyor.redis.TlsToRedis.explain(config.redis(), e))).await();
    ArchiveStore archive = ArchiveStore.forConfig(vertx, config.archive(), config.security().archiveTls());
    return new Transactions(context, new PipelineCatalog(new PipelineParser(StepRegistry.withBuiltIns())), config,
        archive.open().map(v -> archive), new NodeMetrics(false));
  }
}
