package io.conveyor;

import com.hazelcast.cluster.Member;
import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.LifecycleEvent.LifecycleState;
import io.conveyor.bus.Addresses;
import io.conveyor.bus.MemberLeft;
import io.conveyor.bus.Messages;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.lease.ClusterView;
import io.conveyor.metrics.NodeMetrics;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.FileNotFoundException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's Vert.x, clustered through Hazelcast when cluster.enabled. A member that leaves becomes a
 * local conveyor.cluster.member-left hint on the event bus (the reaper looks at once); Hazelcast's view
 * is never taken as a verdict here. Nodes that share Redis keys share a cluster: unless cluster.name says
 * otherwise, the cluster is named after redis.url and redis.prefix, and a member whose Redis differs is
 * named in a warning. Membership changes and merges also go to the node's ClusterView, which holds a node split
 * off by a pause until its view and Redis's registry agree again.
 */
final class NodeCluster {
  private static final Logger log = LoggerFactory.getLogger(NodeCluster.class);
  /** A member attribute: the Redis (without credentials) and key prefix the member's node uses. */
  private static final String REDIS_ATTRIBUTE = "conveyor.redis";
  private final Config.Cluster settings;
  private final String name;
  private final String redis;
  private final ClusterView view;
  private final Config.BusTls busTls;
  private final java.time.Clock clock;
  private HazelcastClusterManager manager;

  /**
   * view hears of every membership change and merge, and reads the members (see ClusterView). With busTls, the bus
   * is on mutual TLS and routes only to members that prove a certificate of the cluster CA (BusTrust; clock judges
   * the certificates' validity).
   */
  NodeCluster(Config.Cluster settings, Config.Redis redis, Config.BusTls busTls, java.time.Clock clock,
              ClusterView view) {
    this.view = view;
    this.settings = settings;
    this.busTls = busTls;
    this.clock = clock;
    this.name = nameFor(settings, redis);
    this.redis = redisOf(redis);
  }

  /**
   * What a node with the api role logs at start when it joins a cluster on a plain bus: the event-bus API's keys and
   * payloads then cross the bus in the clear, to any member Hazelcast lets in. Null when that is not so.
   */
  static String plainBusWarning(Config config) {
    return config.cluster().enabled() && config.node().has("api") && !config.security().busTls().enabled()
        ? "the clustered event bus is plain (security.bus.tls not set): API keys and payloads of the event-bus API "
          + "cross it in the clear, and any member that joins Hazelcast may serve conveyor.* addresses and read them;"
          + " set security.bus.tls.certFile, keyFile and caFile (README, TLS)" : null;
  }

  /** cluster.name, else conveyor- and 8 hex digits of the SHA-256 of the Redis and prefix nodes share. */
  static String nameFor(Config.Cluster settings, Config.Redis redis) {
    if (!settings.name().isEmpty()) {
      return settings.name();
    }
    try {
      byte[] sha = MessageDigest.getInstance("SHA-256").digest(redisOf(redis).getBytes(StandardCharsets.UTF_8));
      return "conveyor-" + HexFormat.of().formatHex(sha, 0, 4);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The Redis as a cluster tells it apart: the URL without user and password (a rotated password is the
   * same Redis), with the port and database spelt out, and the key prefix. A Redis Cluster or Sentinel
   * setup is told by its endpoints in order (and the master's name), so nodes list the same ones.
   */
  static String redisOf(Config.Redis redis) {
    if (redis.mode() == Config.RedisMode.STANDALONE) {
      return endpointOf(redis.url()) + " " + redis.prefix();
    }
    java.util.List<String> each = new java.util.ArrayList<>();
    redis.endpoints().forEach(e -> each.add(endpointOf(e)));
    java.util.Collections.sort(each);
    return redis.mode().name().toLowerCase(java.util.Locale.ROOT) + ":" + String.join(",", each)
        + (redis.masterName().isEmpty() ? "" : "/" + redis.masterName()) + " " + redis.prefix();
  }

  private static String endpointOf(String url) {
    URI uri = URI.create(url);
    String db = uri.getPath() == null || uri.getPath().length() <= 1 ? "0" : uri.getPath().substring(1);
    if (uri.getHost() == null) {
      // a host name URI does not parse as one (proj_redis_1), or a unix socket: the URL as given, less any
      // password, still tells one Redis from another
      String rest = uri.getRawSchemeSpecificPart() == null ? url : uri.getRawSchemeSpecificPart();
      return uri.getScheme() + ":" + rest.replaceFirst("^//[^@/]*@", "//");
    }
    return uri.getScheme() + "://" + uri.getHost().toLowerCase(java.util.Locale.ROOT) + ":"
        + (uri.getPort() == -1 ? 6379 : uri.getPort()) + "/" + db;
  }

  Future<Vertx> createVertx(NodeMetrics metrics, int eventLoops) {
    // epoll through JNI where it is there (Linux x86-64), else NIO; Vert.x's byte counts per Redis connection are
    // left out: they cost every read and write of the hot path (docs/decisions.md)
    VertxOptions options = new VertxOptions().setPreferNativeTransport(true).setMetricsOptions(
        new MicrometerMetricsOptions().setEnabled(true).setJvmMetricsEnabled(true)
            .addDisabledMetricsCategory(io.vertx.micrometer.MetricsDomain.NET_CLIENT))
        // one loop per processor, not Vert.x's two: a hop between contexts then more often stays on its thread
        // instead of waking another (docs/decisions.md, "One event loop per processor")
        .setEventLoopPoolSize(eventLoops);
    MicrometerMetricsFactory meters = new MicrometerMetricsFactory(metrics.registry());
    if (!settings.enabled()) {
      return Future.succeededFuture(Vertx.builder().with(options).withMetrics(meters).build());
    }
    com.hazelcast.config.Config hz;
    try {
      hz = HazelcastConfig.load(settings.config(), name);
    } catch (FileNotFoundException | RuntimeException e) {
      return Future.failedFuture(new ConfigException("cluster.config: cannot load Hazelcast config "
          + settings.config() + " (" + e.getMessage() + ")"));
    }
    hz.getMemberAttributeConfig().setAttribute(REDIS_ATTRIBUTE, redis);
    log.info("joining Hazelcast cluster {} ({}) through {}", name, settings.name().isEmpty()
        ? "named after " + redis : "cluster.name", hz.getNetworkConfig().getJoin().getTcpIpConfig().getMembers());
    options.getEventBusOptions().setHost(settings.host());
    manager = new HazelcastClusterManager(hz);
    io.vertx.core.spi.cluster.ClusterManager bus = manager;
    if (busTls.enabled()) {
      try {
        BusTrust trust = BusTrust.loadNode(busTls, clock);
        trust.secure(options.getEventBusOptions());
        bus = trust.attested(manager);
        log.info("event bus on mutual TLS as {}; members that prove no certificate of the cluster CA get no messages",
            trust.describe());
      } catch (ConfigException e) {
        return Future.failedFuture(e);
      }
    }
    return Vertx.builder().with(options).withMetrics(meters).withClusterManager(bus).buildClustered()
        .onSuccess(this::watchMembers);
  }

  /** Vert.x keeps the cluster manager's one node listener for itself; Hazelcast takes more. */
  private void watchMembers(Vertx vertx) {
    DeliveryOptions local = new DeliveryOptions().setLocalOnly(true);
    com.hazelcast.cluster.Cluster cluster = manager.getHazelcastInstance().getCluster();
    cluster.getMembers().forEach(this::warnIfRedisDiffers);
    view.members(() -> {
      try {
        return manager.getNodes();
      } catch (RuntimeException restarting) {
        return java.util.List.of(); // Hazelcast restarts this member while it merges: no view meanwhile
      }
    });
    // after a pause, a member and the rest see each other as gone until Hazelcast merges the two views
    // (cluster.xml checks every 5 s); Vert.x puts its subscriptions back on MERGED. Say when it happens.
    manager.getHazelcastInstance().getLifecycleService().addLifecycleListener(e -> {
      switch (e.getState()) {
        case MERGING, MERGED, MERGE_FAILED -> view.merging(e.getState() == LifecycleState.MERGING);
        default -> {
        }
      }
      switch (e.getState()) {
        case MERGING -> log.warn("Hazelcast cluster {}: this member was split from the others (a pause?); merging "
            + "back", name);
        case MERGED -> log.info("Hazelcast cluster {}: merged back; {} members", name, cluster.getMembers().size());
        case MERGE_FAILED -> log.error("Hazelcast cluster {}: merging back failed; restart this node if the "
            + "cluster view stays split", name);
        default -> {
        }
      }
    });
    cluster.addMembershipListener(new MembershipListener() {
      @Override
      public void memberAdded(MembershipEvent e) {
        view.changed();
        warnIfRedisDiffers(e.getMember());
      }

      @Override
      public void memberRemoved(MembershipEvent e) {
        view.memberLeft();
        // Vert.x names its nodes itself and keeps the name in a member attribute
        String left = e.getMember().getAttribute("__vertx.nodeId");
        if (left != null) {
          vertx.eventBus().publish(Addresses.MEMBER_LEFT, Messages.encode(new MemberLeft(left)), local);
        }
      }
    });
  }

  /**
   * Nodes of one cluster that use different Redis keys cannot see each other's work, though the event bus
   * joins them: say so loudly. Members without the attribute are programs of the user's, not nodes.
   */
  private void warnIfRedisDiffers(Member member) {
    String theirs = member.getAttribute(REDIS_ATTRIBUTE);
    if (theirs != null && !theirs.equals(redis)) {
      log.warn("Hazelcast cluster {}: member {} uses Redis {}, but this node uses Redis {}; nodes that share a "
          + "cluster must share redis.url and redis.prefix (or set cluster.name apart)", name, member.getAddress(),
          theirs, redis);
    }
  }

  /** True when the node is in its cluster, or runs alone. */
  boolean joined() {
    return !settings.enabled() || manager != null && manager.getNodeId() != null;
  }

  /**
   * The readiness check "cluster": ok; not joined; or held after a pause (a late or fenced beat, a split) until its
   * Hazelcast view and the nodes registered in Redis agree again, meanwhile it takes no work (ClusterView).
   */
  String readiness() {
    if (!joined()) {
      return "not joined";
    }
    return view.held() ? "held after a pause: its cluster view and the nodes registered in Redis do not agree yet"
        : "ok";
  }

  /** This node's id in the Vert.x cluster, or null when it runs alone. */
  String clusterNodeId() {
    return manager == null ? null : manager.getNodeId();
  }
}
