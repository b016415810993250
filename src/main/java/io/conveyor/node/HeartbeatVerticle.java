package io.conveyor.node;

import io.conveyor.Node;
import io.conveyor.redis.RedisLink;
import io.conveyor.redis.TxStore;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says this node is alive: node:<nodeId>:heartbeat (what the node is and how busy) with a TTL of a few beats,
 * rewritten every heartbeat.interval, and the node registered in nodesZ. On a clean stop the node leaves
 * both, so the reaper has nothing to take over.
 */
public final class HeartbeatVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(HeartbeatVerticle.class);
  private final Node node;
  private final long started = System.currentTimeMillis();
  private RedisLink link;
  private TxStore store;
  private long timer = -1;
  private boolean stopping;

  public HeartbeatVerticle(Node node) {
    this.node = node;
  }

  @Override
  public Future<?> start() {
    link = node.link(vertx);
    store = new TxStore(link, node.keys(), node.scripts(), node.clock());
    return beat().onSuccess(v -> next());
  }

  private Future<Void> beat() {
    return store.heartbeat(node.nodeId(), info(), node.config().heartbeat().ttl());
  }

  /** The next beat is timed from the end of this one, so beats never pile up behind a slow Redis. */
  private void next() {
    timer = vertx.setTimer(node.config().heartbeat().interval().toMillis(), t -> beat()
        .onFailure(e -> log.warn("heartbeat failed ({}); the reaper may take this node's work over", e.getMessage()))
        .onComplete(ar -> {
          if (!stopping) {
            next();
          }
        }));
  }

  private JsonObject info() {
    return new JsonObject()
        .put("nodeId", node.nodeId())
        .put("group", node.config().node().group())
        .put("roles", new JsonArray(node.config().node().roles()))
        .put("host", node.config().cluster().host())
        .put("httpPort", node.config().http().port())
        .put("version", Node.version())
        .put("started", started)
        .put("beat", java.time.Instant.ofEpochMilli(node.clock().millis()).toString())
        .put("busy", node.busy().get())
        .put("workers", node.config().node().workers())
        .put("stepTypes", new JsonArray(new TreeSet<>(node.registry().names()).stream().toList()))
        .put("clusterNodeId", node.clusterNodeId());
  }

  /** Beats on while the node drains its work, so nobody takes that work over; then leaves. */
  @Override
  public Future<?> stop() {
    return node.dequeueStopped().future().compose(v -> {
      stopping = true;
      vertx.cancelTimer(timer);
      return store.leave(node.nodeId());
    }).eventually(link::close);
  }
}
