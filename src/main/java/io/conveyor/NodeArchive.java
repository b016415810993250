package io.conveyor;

import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.database.ArchiveStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The archive a node opens, for Node: nodes that archive, answer clients or deliver webhooks open it (status
 * reads fall through to it; a webhook of an archived transaction is delivered from it).
 */
final class NodeArchive {
  private static final Logger log = LoggerFactory.getLogger(NodeArchive.class);

  private NodeArchive() {
  }

  /** The store config names, wrapped by decorator; null when the node's roles need none. */
  static ArchiveStore forRoles(Vertx vertx, Config config, UnaryOperator<ArchiveStore> decorator) {
    if (!config.node().has("archive") && !config.node().has("api") && !config.node().has("webhooks")) {
      return null;
    }
    return decorator.apply(ArchiveStore.forConfig(vertx, config.archive(), config.security().archiveTls()));
  }

  /** Opens it; a failure names the store. */
  static Future<Void> open(ArchiveStore store) {
    return store.open()
        .onSuccess(v -> log.info("archive: {}", store.describe()))
        // a setting at fault (a CA file, a certificate the CA did not sign) stays a ConfigException: exit 2
        .recover(e -> Future.failedFuture(e instanceof ConfigException ? new ConfigException("cannot open the "
            + "archive (" + store.describe() + "): " + e.getMessage()) : new IllegalStateException("cannot open "
            + "the archive (" + store.describe() + "): " + e.getMessage(), e)));
  }
}
