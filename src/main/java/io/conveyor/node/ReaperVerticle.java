package io.conveyor.node;

import io.conveyor.Node;
import io.conveyor.redis.RedisLink;
import io.conveyor.redis.TxStore;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes over the work of dead nodes. Every reaper.interval it asks for the reaper lease (reaperLock1/2);
 * the leader runs reap.lua, which puts back on their queues the transactions of every node whose heartbeat
 * has expired. When Hazelcast sees a member leave, the leader takes that node over at once, without
 * waiting for its heartbeat to expire: fencing by attempt makes an early takeover safe. The leader also
 * wakes the transactions whose sleep is over.
 */
public final class ReaperVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(ReaperVerticle.class);
  private static final String ROLE = "reaper";
  private final Node node;
  private RedisLink link;
  private TxStore store;
  private long timer = -1;
  private boolean stopping;

  public ReaperVerticle(Node node) {
    this.node = node;
  }

  @Override
  public Future<?> start() {
    link = node.link(vertx);
    store = new TxStore(link, node.keys(), node.scripts(), node.clock());
    Context here = context;
    node.onMemberLeft(clusterNodeId -> here.runOnContext(v -> memberLeft(clusterNodeId)));
    tick();
    return Future.succeededFuture();
  }

  /** One round, then the next is timed from its end. */
  private void tick() {
    reapAsLeader(List.of()).onComplete(ar -> {
      if (!stopping) {
        timer = vertx.setTimer(node.config().reaper().interval().toMillis(), t -> tick());
      }
    });
  }

  private boolean forcedNow;

  private Future<Void> reapAsLeader(Collection<String> forced) {
    return store.lease(ROLE, node.nodeId(), node.config().reaper().lease(), node.config().reaper().grace())
        .compose(leader -> {
          forcedNow = !forced.isEmpty();
          // an entry older than a heartbeat TTL whose node is not registered can have no live owner
          return leader ? store.reap(forced, node.config().heartbeat().ttl()).map(this::report)
              .compose(v -> wakeSleepers())
              : Future.<Void>succeededFuture();
        })
        .onFailure(e -> log.warn("reaper round failed: {}", e.getMessage()));
  }

  /**
   * Sleepers whose time has come go back on their queues, up to 1000 a round (more wait a round); then the
   * queue lengths of every group a live node serves go into the stats.
   */
  private Future<Void> wakeSleepers() {
    return store.wake(1000).compose(n -> store.nodes())
        .compose(nodes -> {
          java.util.Set<String> groups = new java.util.TreeSet<>();
          nodes.values().forEach(i -> groups.add(i.getString("group")));
          groups.add(node.config().node().group());
          return store.sampleQueues(groups);
        }).mapEmpty();
  }

  private Void report(Map<String, Integer> reaped) {
    Integer garbage = reaped.remove("garbage");
    if (garbage != null && garbage > 0) {
      log.warn("cleared {} processing entries with no live owner (see eventsL and exceptionZ)", garbage);
    }
    reaped.forEach((nodeId, n) -> log.warn("node {} is gone ({}): put its {} running transactions back on their "
        + "queues", nodeId, reaped.size() == 1 && forcedNow ? "left the cluster" : "heartbeat expired", n));
    return null;
  }

  /**
   * Hazelcast saw a member leave: find the Conveyor node it was from its heartbeat, free the reaper lease if
   * that node held it (else nobody could reap for lease + grace), and take the node over now.
   */
  private void memberLeft(String clusterNodeId) {
    store.nodes().compose(nodes -> {
      List<String> gone = nodes.entrySet().stream()
          .filter(e -> clusterNodeId.equals(e.getValue().getString("clusterNodeId")))
          .map(Map.Entry::getKey).toList();
      return gone.isEmpty() ? Future.succeededFuture()
          : store.breakLease(ROLE, gone).compose(freed -> reapAsLeader(gone));
    }).onFailure(e -> log.warn("taking over a departed member failed: {}", e.getMessage()));
  }

  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(timer);
    return link.close();
  }
}
