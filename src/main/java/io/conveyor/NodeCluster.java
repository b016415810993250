package io.conveyor;

import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.config.FileSystemXmlConfig;
import io.conveyor.bus.Addresses;
import io.conveyor.bus.MemberLeft;
import io.conveyor.bus.Messages;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.metrics.NodeMetrics;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.FileNotFoundException;

/**
 * The node's Vert.x, clustered through Hazelcast when cluster.enabled. A member that leaves becomes a
 * local conveyor.cluster.member-left hint on the event bus (the reaper looks at once); Hazelcast's view
 * is never taken as a verdict here.
 */
final class NodeCluster {
  private final Config.Cluster settings;
  private HazelcastClusterManager manager;

  NodeCluster(Config.Cluster settings) {
    this.settings = settings;
  }

  Future<Vertx> createVertx(NodeMetrics metrics) {
    VertxOptions options = new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true)
        .setJvmMetricsEnabled(true));
    MicrometerMetricsFactory meters = new MicrometerMetricsFactory(metrics.registry());
    if (!settings.enabled()) {
      return Future.succeededFuture(Vertx.builder().with(options).withMetrics(meters).build());
    }
    com.hazelcast.config.Config hz;
    try {
      hz = new FileSystemXmlConfig(settings.config());
    } catch (FileNotFoundException | RuntimeException e) {
      return Future.failedFuture(new ConfigException("cluster.config: cannot load Hazelcast config "
          + settings.config() + " (" + e.getMessage() + ")"));
    }
    if (!settings.name().isEmpty()) {
      hz.setClusterName(settings.name());
    }
    options.getEventBusOptions().setHost(settings.host());
    manager = new HazelcastClusterManager(hz);
    return Vertx.builder().with(options).withMetrics(meters).withClusterManager(manager).buildClustered()
        .onSuccess(this::hintDepartures);
  }

  /** Vert.x keeps the cluster manager's one node listener for itself; Hazelcast takes more. */
  private void hintDepartures(Vertx vertx) {
    DeliveryOptions local = new DeliveryOptions().setLocalOnly(true);
    manager.getHazelcastInstance().getCluster().addMembershipListener(new MembershipListener() {
      @Override
      public void memberAdded(MembershipEvent e) {
      }

      @Override
      public void memberRemoved(MembershipEvent e) {
        // Vert.x names its nodes itself and keeps the name in a member attribute
        String left = e.getMember().getAttribute("__vertx.nodeId");
        if (left != null) {
          vertx.eventBus().publish(Addresses.MEMBER_LEFT, Messages.encode(new MemberLeft(left)), local);
        }
      }
    });
  }

  /** True when the node is in its cluster, or runs alone. */
  boolean joined() {
    return !settings.enabled() || manager != null && manager.getNodeId() != null;
  }

  /** This node's id in the Vert.x cluster, or null when it runs alone. */
  String clusterNodeId() {
    return manager == null ? null : manager.getNodeId();
  }
}
