package io.conveyor;

import io.conveyor.api.BridgeVerticle;
import io.conveyor.api.BusApiVerticle;
import io.conveyor.api.HttpApiVerticle;
import io.conveyor.archive.ArchiveVerticle;
import io.conveyor.bus.Addresses;
import io.conveyor.bus.EventsVerticle;
import io.conveyor.bus.MemberLeft;
import io.conveyor.bus.Messages;
import io.conveyor.bus.NotifyVerticle;
import io.conveyor.config.BuildInfo;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.database.ArchiveStore;
import io.conveyor.domain.Transactions;
import io.conveyor.lease.Assignment;
import io.conveyor.lease.ClusterView;
import io.conveyor.lease.LeaderLoop;
import io.conveyor.lease.Registration;
import io.conveyor.time.Ticker;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.Ids;
import io.conveyor.net.WebhookGuard;
import io.conveyor.node.HeartbeatVerticle;
import io.conveyor.node.MemoryWatchVerticle;
import io.conveyor.node.ReaperVerticle;
import io.conveyor.pipeline.CompiledPipeline;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.pipeline.PipelineParser;
import io.conveyor.pipeline.StepRegistry;
import io.conveyor.pipeline.steps.ClusterChanges;
import io.conveyor.queue.DequeueVerticle;
import io.conveyor.redis.EmbeddedRedis;
import io.conveyor.redis.Handoff;
import io.conveyor.redis.LeaderRole;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.Scripts;
import io.conveyor.redis.StoreContext;
import io.conveyor.schedule.ScheduleFiles;
import io.conveyor.schedule.ScheduleVerticle;
import io.conveyor.trace.Tracing;
import io.conveyor.webhook.WebhookVerticle;
import io.vertx.core.Deployable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: one running node. It builds the node's services once (Redis access, the pipeline
 * catalog, the archive, the meters), gives each verticle only what it uses, deploys the verticles of its
 * roles, and stops them in order. No other class knows them all.
 */
public final class Node {
  private static final Logger log = LoggerFactory.getLogger(Node.class);
  /** How long one verticle may take to stop (the dequeue verticle gets node.drainTime on top). */
  private static final Duration STOP_BOUND = Duration.ofSeconds(10);
  /** How long a node that failed to start may take to stop what it had started. */
  private static final Duration ABORT_BOUND = Duration.ofSeconds(8);
  private final Config config;
  private final String nodeId = Ids.nodeId();
  private final Clock clock;
  private final long started;
  private final StepRegistry registry;
  private final PipelineCatalog catalog;
  private final NodeMetrics metrics;
  /** Replaced once at start by one whose scripts suit the server (flagged on Redis 7; see Scripts.forServer). */
  private RedisAccess redis;
  /** Which partitions of each leader role this node asks for (see Assignment). */
  private final Assignment assignment;
  private final EmbeddedRedis embedded;
  private final Registration registration;
  /** Deployments, last deployed first: the edges stop before the work, the heartbeat last of all. */
  private final Deque<Deployed> deployed = new ArrayDeque<>();
  private final UnaryOperator<ArchiveStore> archiveDecorator;
  private final NodeCluster cluster;
  private final Tracing tracing;
  private Vertx vertx;
  /** What the node publishes into Redis, at start and again after Redis lost it; set once the scripts are known. */
  private Publication publication;
  private ArchiveStore archive;

  private record Deployed(String name, String id, Duration bound) { }

  private Node(Config config, Clock clock, StepRegistry registry, EmbeddedRedis embedded,
               UnaryOperator<ArchiveStore> archiveDecorator, Tracing tracing, ClusterView view) {
    this.config = config;
    this.clock = clock;
    this.started = clock.millis();
    this.registry = registry;
    this.embedded = embedded;
    this.archiveDecorator = archiveDecorator;
    this.tracing = tracing;
    this.catalog = new PipelineCatalog(new PipelineParser(registry));
    this.metrics = new NodeMetrics(config.metrics().ownerLabels());
    this.redis = RedisAccess.forNode(config, clock, metrics);
    metrics.busyWorkers(metrics::workersBusy, config.node().workers()).partitions(redis.health());
    this.assignment = new Assignment(nodeId, config.redis().partitions(), config.heartbeat().ttl(), redis.ticker());
    this.registration = new Registration(config.heartbeat().ttl().minus(config.heartbeat().interval()), redis.ticker(),
        view);
    this.cluster = new NodeCluster(config.cluster(), config.redis(), config.security().busTls(), clock, view);
  }

  /**
   * Starts a node: an embedded Redis if needed, the pipelines checked, Vert.x (clustered if configured), scripts
   * loaded, pipelines published, then the verticles of its roles. Blocks while it reads files and starts Redis, so
   * call it from main or a test thread, never an event loop. On failure, what was started is stopped (bounded).
   */
  public static Future<Node> start(Config config, Clock clock, StepRegistry registry) {
    return start(config, clock, registry, UnaryOperator.identity());
  }

  /** The same, with the archive store wrapped by the given decorator (tests record what it is given). */
  public static Future<Node> start(Config config, Clock clock, StepRegistry registry,
                                   UnaryOperator<ArchiveStore> archive) {
    Tracing tracing;
    try {
      tracing = Tracing.fromConfig(config.tracing());
    } catch (RuntimeException e) {
      return Future.failedFuture(new ConfigException("tracing: the OTEL_* settings are not "
          + "usable: " + e.getMessage()));
    }
    return start(config, clock, registry, archive, tracing);
  }

  /** The same, tracing into the given Tracing (tests pass one with an in-memory exporter). */
  public static Future<Node> start(Config config, Clock clock, StepRegistry registry,
                                   UnaryOperator<ArchiveStore> archive, Tracing tracing) {
    Node node;
    List<CompiledPipeline> pipelines;
    List<ScheduleFiles.Loaded> schedules;
    String compiler = JitHint.apply(config.node().compiler()); // first: what runs from here on is compiled so
    if (compiler != null) {
      log.info(compiler);
    }
    try {
      // http/request steps call out under the same guard as webhooks; eventbus steps ask the node's cluster view
      ClusterView view = new ClusterView(config.heartbeat().interval().multipliedBy(5).dividedBy(2), Ticker.SYSTEM);
      registry.outbound(WebhookGuard.of(config.webhooks())).clusterChanges(ClusterChanges.of(view::now,
          view::changedSince));
      pipelines = new PipelineParser(registry).loadDir(Path.of(config.pipelines().dir()));
      schedules = ScheduleFiles.load(config.schedules().dir());
      node = new Node(config, clock, registry, EmbeddedRedis.startIfNeeded(config.redis()), archive, tracing, view);
    } catch (Exception e) {
      return Future.failedFuture(e);
    }
    return node.cluster.createVertx(node.metrics, config.node().eventLoopThreads())
        .compose(v -> {
          node.vertx = v;
          return node.prepareRedis(pipelines, schedules);
        })
        .compose(v -> node.openArchive())
        .compose(v -> node.deployRoles())
        .map(v -> {
          log.info("node {} started: group {}, roles {}, {} workers, Redis {}{}, {} pipelines, {} event loops on {}",
              node.nodeId, config.node().group(), config.node().roles(), config.node().workers(), io.conveyor.config
              .MaskedUrl.of(config.redis().url()), node.embedded != null ? " (embedded)" : "", pipelines.size(), config
              .node().eventLoopThreads(), node.vertx.isNativeTransportEnabled() ? "epoll (native)" : "Java NIO (" + node.vertx.unavailableNativeTransportCause() + ")");
          return node;
        })
        // a node that cannot start must say so and go within seconds: its clean-up is bounded as a whole
        .recover(e -> node.stop().timeout(ABORT_BOUND.toMillis(), TimeUnit.MILLISECONDS)
            .transform(ar -> Future.failedFuture(e)));
  }

  /** Loads the scripts into Redis (flagged ones where it takes them), then publishes the node's files. */
  private Future<Void> prepareRedis(List<CompiledPipeline> pipelines, List<ScheduleFiles.Loaded> schedules) {
    StoreContext probe = redis.open(vertx);
    return Scripts.forServer(probe.link()).eventually(probe::close)
        .recover(e -> Future.failedFuture(io.conveyor.redis.TlsToRedis.unreachable(config.redis(), e)))
        .compose(scripts -> {
          redis = redis.withScripts(scripts);
          publication = new Publication(config, catalog, redis.scripts(), pipelines);
          return publication.prepare(redis.open(vertx), schedules);
        });
  }

  /** The archive, for the roles that read or fill it (see NodeArchive); kept before it opens, so stop() closes it. */
  private Future<Void> openArchive() {
    try {
      archive = NodeArchive.forRoles(vertx, config, archiveDecorator);
    } catch (ConfigException e) {
      return Future.failedFuture(e);
    }
    return archive == null ? Future.succeededFuture() : NodeArchive.open(archive);
  }

  /** The heartbeat first (a node that takes work must be known to be alive), the edges last; stop() reverses it. */
  private Future<Void> deployRoles() {
    Config.Node n = config.node();
    // Hazelcast's word that a member left moves its partitions to their heirs at once (see Assignment)
    vertx.eventBus().localConsumer(Addresses.MEMBER_LEFT, m -> assignment.memberLeft(
        Messages.decode(m.body(), MemberLeft.class).clusterNodeId()));
    Future<Void> chain = deploy("heartbeat", new HeartbeatVerticle(redis, new HeartbeatVerticle.Settings(nodeId,
        config.heartbeat().interval(), config.heartbeat().ttl()), this::heartbeatInfo, r -> publication.restore(r),
        registration, assignment))
        // one watcher per node; its verdicts reach the start paths deployed below (each check, by message)
        .compose(v -> deploy("memory watch", new MemoryWatchVerticle(redis,
            config.redis().memory(), nodeId, metrics)))
        // every node hears of every completion, whoever waits on it here
        .compose(v -> deploy("notify", new NotifyVerticle(redis, nodeId)))
        .compose(v -> deploy("events", new EventsVerticle(redis, metrics)));
    if (n.has("reaper")) {
      chain = perPartition(chain, "reaper", part -> new ReaperVerticle(redis, new ReaperVerticle.Settings(nodeId,
          n.group(), config.reaper().interval(), config.reaper().lease(), config.reaper().grace(),
          config.heartbeat().ttl(), outageGrace(), config.archive().delay(),
          io.conveyor.node.StuckWatch.Settings.of(config.reaper(), config.transactions().stepTimeout(), catalog)),
          seat(LeaderRole.REAPER, part)));
    }
    if (n.has("archive")) {
      chain = perPartition(chain, "archive", part -> new ArchiveVerticle(redis, archive,
          config.archive(), config.audit().retention(), metrics, seat(LeaderRole.ARCHIVE, part)));
    }
    if (n.has("webhooks")) {
      chain = perPartition(chain, "webhooks", part -> new WebhookVerticle(redis, archive,
          config.webhooks(), metrics, seat(LeaderRole.WEBHOOKS, part), tracing));
    }
    if (n.has("scheduler")) {
      chain = perPartition(chain, "scheduler", part -> new ScheduleVerticle(
          redis, this::transactions, config.schedules(), metrics, seat(LeaderRole.SCHEDULER, part)));
    }
    if (n.has("dequeue")) {
      DequeueVerticle workers = new DequeueVerticle(redis, catalog, metrics,
          new DequeueVerticle.Settings(nodeId, n.group(), n.workers(), n.idleWait(), n.drainTime(),
              config.transactions().stepTimeout(), config.archive().delay(), config.limits()), registration,
          tracing);
      chain = chain.compose(v -> deploy("dequeue", workers, n.drainTime())).onSuccess(v -> handoff = workers.handoff())
          .compose(v -> deploy("await", new io.conveyor.bus.AwaitVerticle(redis, config.events().retention())));
    }
    if (n.has("api")) {
      chain = chain.compose(v -> deploy("bus API", new BusApiVerticle(redis, this::transactions,
          t -> io.conveyor.domain.Events.on(t, catalog, config), BusApiVerticle.Callers.of(config, nodeId, metrics))));
      if (config.http().port() > 0) {
        HttpWiring routes = new HttpWiring(config, catalog, archive, metrics, publication.names(), cluster::readiness,
            nodeId);
        chain = chain.compose(v -> deploy("HTTP API", new HttpApiVerticle(config.http(),
            config.security().httpTls(), redis, this::transactions, routes::on)));
      }
    }
    if (config.bridge().tcpPort() > 0) {
      chain = chain.compose(v -> deploy("TCP bridge", new BridgeVerticle(config.bridge(), config.security().bridgeTls(),
          config.api().keys())));
    }
    return chain;
  }

  /** The domain service on an interface verticle's own Redis context; its starts offer this node's workers. */
  private Transactions transactions(StoreContext context) {
    return new Transactions(context, catalog, config, Future.succeededFuture(archive), metrics, tracing,
        this::handoff);
  }

  /** After an outage, how long the reaper judges nobody: a TTL, or redis.timeout + an interval (a hung beat) if longer. */
  private Duration outageGrace() {
    Duration afterHung = config.redis().timeout().plus(config.heartbeat().interval());
    return afterHung.compareTo(config.heartbeat().ttl()) > 0 ? afterHung : config.heartbeat().ttl();
  }

  private Future<Void> deploy(String name, Deployable verticle) {
    return deploy(name, verticle, Duration.ZERO);
  }

  /** Deploys one verticle; a failure names it, so the log says which role could not start and why. */
  private Future<Void> deploy(String name, Deployable verticle, Duration extraStopTime) {
    return vertx.deployVerticle(verticle)
        .recover(e -> Future.failedFuture(new IllegalStateException("the " + name + " verticle did not start: "
            + e.getMessage(), e)))
        .map(id -> {
          deployed.push(new Deployed(name, id, STOP_BOUND.plus(extraStopTime)));
          return null;
        });
  }

  /** Deploys a role's verticle per partition, in turn, after chain (named by its partition when there are several). */
  private Future<Void> perPartition(Future<Void> chain, String role, IntFunction<Deployable> verticle) {
    int parts = redis.keys().partitions();
    for (int p = 0; p < parts; p++) {
      int part = p;
      String name = parts == 1 ? role : role + " (partition " + p + ")";
      chain = chain.compose(v -> deploy(name, verticle.apply(part)));
    }
    return chain;
  }

  /** Where this node leads a role in one partition (see LeaderLoop). */
  private LeaderLoop.Seat seat(LeaderRole role, int partition) {
    return new LeaderLoop.Seat(role, partition, nodeId, assignment, redis.ticker());
  }

  /** What the heartbeat key says about this node, read anew at each beat. */
  private JsonObject heartbeatInfo() {
    return new JsonObject().put("nodeId", nodeId).put("group", config.node().group())
        .put("roles", new JsonArray(config.node().roles())).put("host", config.cluster().host())
        .put("httpPort", config.http().port())
        .put("version", BuildInfo.version())
        .put("started", started)
        .put("beat", Instant.ofEpochMilli(clock.millis()).toString())
        .put("busy", metrics.workersBusy())
        .put("workers", config.node().workers())
        .put("stepTypes", new JsonArray(new java.util.TreeSet<>(registry.names()).stream().toList()))
        .put("clusterNodeId", cluster.clusterNodeId())
        .put("view", registration.view().fingerprint()) // the members it sees, held against the others' (ClusterView)
        // roles this node stands down from for now: the others share their partitions out without it
        .put("away", new JsonArray(assignment.awayRoles()));
  }

  /**
   * Stops the verticles one by one, the last deployed first: the APIs stop taking requests, the dequeue
   * verticle lets running transactions finish (up to node.drainTime) and puts back what is left, the
   * leader roles hand on their leases, and the heartbeat, last, leaves nodesZ. Each stop is bounded, so a
   * stuck verticle cannot hold the node. Then the node leaves the cluster and stops an embedded Redis.
   */
  public Future<Void> stop() {
    Future<Void> chain = Future.succeededFuture();
    while (!deployed.isEmpty()) {
      Deployed d = deployed.pop();
      chain = chain.compose(v -> vertx.undeploy(d.id()).timeout(d.bound().toMillis(), TimeUnit.MILLISECONDS)
          .recover(e -> {
            log.warn("the {} verticle did not stop cleanly within {} s: {}", d.name(), d.bound().toSeconds(),
                e.getMessage());
            return Future.succeededFuture();
          }));
    }
    return chain.compose(v -> vertx == null ? Future.<Void>succeededFuture()
            : vertx.close().timeout(STOP_BOUND.toMillis(), TimeUnit.MILLISECONDS))
        .eventually(() -> {
          if (archive != null) {
            archive.close().onFailure(e -> log.debug("closing the archive: {}", e.getMessage()));
          }
          if (embedded != null) {
            embedded.stop();
          }
          Promise<Void> flushed = Promise.promise();
          tracing.close(flushed::tryComplete);
          return flushed.future();
        });
  }

  public String nodeId() {
    return nodeId;
  }

  public Config config() {
    return config;
  }

  /** This node's workers, offered to its starts once they run (see Handoff); none before, or without the role. */
  private volatile Handoff handoff = Handoff.NONE;

  public Handoff handoff() {
    return handoff;
  }

  /** The Vert.x this node runs on (tests deploy consumers on it). */
  public Vertx vertx() {
    return vertx;
  }

  /** The pipelines this node knows (tests publish through it as a node does). */
  public PipelineCatalog catalog() {
    return catalog;
  }

  /** The archive store, or null when this node neither archives nor answers clients. */
  public ArchiveStore archive() {
    return archive;
  }

  /** This node's meters and Vert.x's, as /metrics serves them. */
  public NodeMetrics metrics() {
    return metrics;
  }

  /** This node's Redis access (tests open stores on it as the node's verticles do). */
  public RedisAccess redis() {
    return redis;
  }
}
