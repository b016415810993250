package io.conveyor;

import com.hazelcast.config.FileSystemXmlConfig;
import io.conveyor.api.BridgeVerticle;
import io.conveyor.api.BusApiVerticle;
import io.conveyor.api.HttpApiVerticle;
import io.conveyor.api.NotifyVerticle;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.model.Ids;
import io.conveyor.pipeline.CompiledPipeline;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.pipeline.PipelineParser;
import io.conveyor.pipeline.StepRegistry;
import io.conveyor.node.HeartbeatVerticle;
import io.conveyor.node.ReaperVerticle;
import io.conveyor.queue.DequeueVerticle;
import io.conveyor.redis.EmbeddedRedis;
import io.conveyor.redis.Keys;
import io.conveyor.redis.RedisLink;
import io.conveyor.redis.Scripts;
import io.conveyor.redis.TxStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.redis.client.RedisOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.FileNotFoundException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One running node: its id, config, shared parts, Vert.x, and the verticles of its roles. */
public final class Node {
  private static final Logger log = LoggerFactory.getLogger(Node.class);
  private final Config config;
  private final String nodeId = Ids.nodeId();
  private final Clock clock;
  private final Keys keys;
  private final Scripts scripts = new Scripts();
  private final PipelineCatalog catalog;
  private final EmbeddedRedis embedded;
  private final StepRegistry registry;
  private final java.util.concurrent.atomic.AtomicInteger busy = new java.util.concurrent.atomic.AtomicInteger();
  private final List<java.util.function.Consumer<String>> memberLeft = new java.util.concurrent.CopyOnWriteArrayList<>();
  private HazelcastClusterManager clusterManager;
  private final io.vertx.core.Promise<Void> dequeueStopped = io.vertx.core.Promise.promise();
  private Vertx vertx;
  private final java.util.function.UnaryOperator<io.conveyor.archive.ArchiveStore> archiveDecorator;
  private io.conveyor.archive.ArchiveStore archive;

  private Node(Config config, Clock clock, StepRegistry registry, EmbeddedRedis embedded,
               java.util.function.UnaryOperator<io.conveyor.archive.ArchiveStore> archiveDecorator) {
    this.archiveDecorator = archiveDecorator;
    this.config = config;
    this.metrics = new io.conveyor.node.NodeMetrics(config.metrics().ownerLabels());
    metrics.busyWorkers(busy::get, config.node().workers());
    this.clock = clock;
    this.keys = new Keys(config.redis().prefix());
    this.catalog = new PipelineCatalog(new PipelineParser(registry));
    this.embedded = embedded;
    this.registry = registry;
  }

  /**
   * Starts a node: an embedded Redis if needed, the pipelines checked, Vert.x (clustered if configured),
   * scripts loaded, pipelines published, then the verticles of its roles. Blocks while it reads files and
   * starts Redis, so call it from main or a test thread, never from an event loop.
   */
  public static Future<Node> start(Config config, Clock clock, StepRegistry registry) {
    return start(config, clock, registry, java.util.function.UnaryOperator.identity());
  }

  /** The same, with the archive store wrapped by the given decorator (tests record what it is given). */
  public static Future<Node> start(Config config, Clock clock, StepRegistry registry,
                                   java.util.function.UnaryOperator<io.conveyor.archive.ArchiveStore> archive) {
    Node node;
    List<CompiledPipeline> pipelines;
    try {
      pipelines = new PipelineParser(registry).loadDir(Path.of(config.pipelines().dir()));
      node = new Node(config, clock, registry, EmbeddedRedis.startIfNeeded(config.redis()), archive);
    } catch (Exception e) {
      return Future.failedFuture(e);
    }
    return node.createVertx()
        .compose(v -> node.prepareRedis(pipelines))
        .compose(v -> node.openArchive())
        .compose(v -> node.deployRoles())
        .map(v -> {
          log.info("node {} started: group {}, roles {}, {} workers, Redis {}{}, {} pipelines", node.nodeId,
              config.node().group(), config.node().roles(), config.node().workers(), config.redis().url(),
              node.embedded != null ? " (embedded)" : "", pipelines.size());
          return node;
        })
        .recover(e -> node.stop().transform(ar -> Future.failedFuture(e)));
  }

  private Future<Void> createVertx() {
    VertxOptions options = new VertxOptions().setMetricsOptions(new io.vertx.micrometer.MicrometerMetricsOptions()
        .setEnabled(true).setJvmMetricsEnabled(true));
    io.vertx.micrometer.MicrometerMetricsFactory meters = new io.vertx.micrometer.MicrometerMetricsFactory(
        metrics.registry());
    if (!config.cluster().enabled()) {
      vertx = Vertx.builder().with(options).withMetrics(meters).build();
      return Future.succeededFuture();
    }
    com.hazelcast.config.Config hz;
    try {
      hz = new FileSystemXmlConfig(config.cluster().config());
    } catch (FileNotFoundException | RuntimeException e) {
      return Future.failedFuture(new ConfigException("cluster.config: cannot load Hazelcast config "
          + config.cluster().config() + " (" + e.getMessage() + ")"));
    }
    if (!config.cluster().name().isEmpty()) {
      hz.setClusterName(config.cluster().name());
    }
    options.getEventBusOptions().setHost(config.cluster().host());
    clusterManager = new HazelcastClusterManager(hz);
    return Vertx.builder().with(options).withMetrics(meters).withClusterManager(clusterManager).buildClustered()
        .map(v -> {
          vertx = v;
          // Vert.x keeps the cluster manager's one node listener for itself; Hazelcast takes more
          clusterManager.getHazelcastInstance().getCluster().addMembershipListener(new com.hazelcast.cluster
              .MembershipListener() {
            @Override
            public void memberAdded(com.hazelcast.cluster.MembershipEvent e) {
            }

            @Override
            public void memberRemoved(com.hazelcast.cluster.MembershipEvent e) {
              // Vert.x names its nodes itself and keeps the name in a member attribute
              String left = e.getMember().getAttribute("__vertx.nodeId");
              if (left != null) {
                memberLeft.forEach(l -> l.accept(left));
              }
            }
          });
          return null;
        });
  }

  private final List<String> pipelineNames = new java.util.concurrent.CopyOnWriteArrayList<>();

  /** The pipelines this node loaded from its files and published at start. */
  public List<String> pipelineNames() {
    return pipelineNames;
  }

  private Future<Void> prepareRedis(List<CompiledPipeline> pipelines) {
    pipelines.forEach(p -> pipelineNames.add(p.pipeline().name()));
    RedisLink link = link(vertx);
    TxStore store = new TxStore(link, keys, scripts, clock);
    List<Future<CompiledPipeline>> published = new ArrayList<>();
    return scripts.loadAll(link)
        .recover(e -> Future.failedFuture(new IllegalStateException("cannot load the Lua scripts into Redis at "
            + config.redis().url() + ": " + e.getMessage(), e)))
        .compose(v -> {
          pipelines.forEach(p -> published.add(catalog.publish(store, p)));
          return Future.all(published);
        })
        .<Void>mapEmpty()
        .eventually(link::close);
  }

  /**
   * Nodes that archive, answer clients or deliver webhooks open the archive (status reads fall through to
   * it; a webhook of an archived transaction is delivered from it).
   */
  private Future<Void> openArchive() {
    if (!config.node().has("archive") && !config.node().has("api") && !config.node().has("webhooks")) {
      return Future.succeededFuture();
    }
    io.conveyor.archive.ArchiveStore store;
    try {
      store = archiveDecorator.apply(io.conveyor.archive.ArchiveStore.forConfig(vertx, config.archive()));
    } catch (ConfigException e) {
      return Future.failedFuture(e);
    }
    archive = store;
    return store.open()
        .onSuccess(v -> log.info("archive: {}", store.describe()))
        .recover(e -> Future.failedFuture(new IllegalStateException("cannot open the archive ("
            + store.describe() + "): " + e.getMessage(), e)));
  }

  /** The archive store, or null when this node neither archives nor answers clients. */
  public io.conveyor.archive.ArchiveStore archive() {
    return archive;
  }

  /** The heartbeat comes first: a node that takes work must already be known to be alive. */
  private Future<Void> deployRoles() {
    return vertx.deployVerticle(new HeartbeatVerticle(this)).compose(id -> deployOthers());
  }

  private Future<Void> deployOthers() {
    List<Future<String>> deployed = new ArrayList<>();
    if (config.node().has("dequeue")) {
      deployed.add(vertx.deployVerticle(new DequeueVerticle(this)));
    } else {
      dequeueStopped.tryComplete();
    }
    if (config.node().has("reaper")) {
      deployed.add(vertx.deployVerticle(new ReaperVerticle(this)));
    }
    if (config.node().has("archive")) {
      deployed.add(vertx.deployVerticle(new io.conveyor.archive.ArchiveVerticle(this)));
    }
    if (config.node().has("webhooks")) {
      deployed.add(vertx.deployVerticle(new io.conveyor.webhook.WebhookVerticle(this)));
    }
    if (config.node().has("api")) {
      deployed.add(vertx.deployVerticle(new BusApiVerticle(this)));
      if (config.http().port() > 0) {
        deployed.add(vertx.deployVerticle(new HttpApiVerticle(this)));
      }
    }
    if (config.bridge().tcpPort() > 0) {
      deployed.add(vertx.deployVerticle(new BridgeVerticle(this)));
    }
    // every node hears of every completion, whoever waits on it here
    deployed.add(vertx.deployVerticle(new NotifyVerticle(this)));
    return Future.all(deployed).mapEmpty();
  }

  /**
   * Stops the verticles: the dequeue verticle stops taking work, lets running transactions finish (up to
   * node.drainTime) and puts back what is left, while the heartbeat goes on beating until then and only
   * then leaves nodesZ. Then the node leaves the cluster and stops an embedded Redis.
   */
  public Future<Void> stop() {
    Future<Void> closed = vertx == null ? Future.succeededFuture() : vertx.close();
    return closed.eventually(() -> {
      if (archive != null) {
        archive.close().onFailure(e -> log.debug("closing the archive: {}", e.getMessage()));
      }
      if (embedded != null) {
        embedded.stop();
      }
      return Future.succeededFuture();
    });
  }

  /** Completes when this node has no work left: its dequeue verticle has drained and stopped (or never ran). */
  public io.vertx.core.Promise<Void> dequeueStopped() {
    return dequeueStopped;
  }

  /** Transactions this node runs now (kept by the dequeue verticle, read by the heartbeat). */
  public java.util.concurrent.atomic.AtomicInteger busy() {
    return busy;
  }

  public StepRegistry registry() {
    return registry;
  }

  /** This node's id in the Vert.x cluster, or null when it runs alone. */
  public String clusterNodeId() {
    return clusterManager == null ? null : clusterManager.getNodeId();
  }

  /** Calls back (on a Hazelcast thread) with the cluster node id of each member that leaves. */
  public void onMemberLeft(java.util.function.Consumer<String> listener) {
    memberLeft.add(listener);
  }

  /** The version in the jar's manifest, or "dev" when run from classes. */
  public static String version() {
    String v = Node.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }

  public RedisOptions redisOptions() {
    return RedisLink.options(config.redis().url(), config.redis().maxPipelined());
  }

  /** A pipelined link for a verticle of this node, with the configured timeout. */
  public RedisLink link(Vertx on) {
    return new RedisLink(on, redisOptions(), config.redis().timeout()).metrics(metrics);
  }

  private final io.conveyor.node.NodeMetrics metrics;

  /** This node's meters (and Vert.x's), served at /metrics. */
  public io.conveyor.node.NodeMetrics metrics() {
    return metrics;
  }

  public Config config() {
    return config;
  }

  public String nodeId() {
    return nodeId;
  }

  public Clock clock() {
    return clock;
  }

  public Keys keys() {
    return keys;
  }

  public Scripts scripts() {
    return scripts;
  }

  public PipelineCatalog catalog() {
    return catalog;
  }

  public Vertx vertx() {
    return vertx;
  }
}
