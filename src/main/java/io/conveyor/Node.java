package io.conveyor;

import io.conveyor.api.BridgeVerticle;
import io.conveyor.api.BusApiVerticle;
import io.conveyor.api.HttpApiVerticle;
import io.conveyor.archive.ArchiveVerticle;
import io.conveyor.bus.NotifyVerticle;
import io.conveyor.config.BuildInfo;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.database.ArchiveStore;
import io.conveyor.domain.Transactions;
import io.conveyor.lease.Assignment;
import io.conveyor.lease.LeaderLoop;
import io.conveyor.lease.Registration;
import io.conveyor.lease.Ticker;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.Ids;
import io.conveyor.node.HeartbeatVerticle;
import io.conveyor.node.ReaperVerticle;
import io.conveyor.pipeline.CompiledPipeline;
import io.conveyor.pipeline.PipelineCatalog;
import io.conveyor.pipeline.PipelineParser;
import io.conveyor.pipeline.StepRegistry;
import io.conveyor.queue.DequeueVerticle;
import io.conveyor.redis.EmbeddedRedis;
import io.conveyor.redis.Keys;
import io.conveyor.redis.LeaderRole;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.RedisLink;
import io.conveyor.redis.Scripts;
import io.conveyor.redis.StoreContext;
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
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
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
  private final List<String> pipelineNames = new ArrayList<>();
  /** The pipelines of the node's files: what it publishes at start, and again if Redis comes back without. */
  private final List<CompiledPipeline> ownPipelines = new ArrayList<>();
  /** Deployments, last deployed first: the edges stop before the work, the heartbeat last of all. */
  private final Deque<Deployed> deployed = new ArrayDeque<>();
  private final UnaryOperator<ArchiveStore> archiveDecorator;
  private final NodeCluster cluster;
  private final io.conveyor.trace.Tracing tracing;
  private Vertx vertx;
  private ArchiveStore archive;

  private record Deployed(String name, String id, Duration bound) {
  }

  private Node(Config config, Clock clock, StepRegistry registry, EmbeddedRedis embedded,
               UnaryOperator<ArchiveStore> archiveDecorator, io.conveyor.trace.Tracing tracing) {
    this.config = config;
    this.clock = clock;
    this.started = clock.millis();
    this.registry = registry;
    this.embedded = embedded;
    this.archiveDecorator = archiveDecorator;
    this.tracing = tracing;
    this.catalog = new PipelineCatalog(new PipelineParser(registry));
    this.metrics = new NodeMetrics(config.metrics().ownerLabels());
    metrics.busyWorkers(metrics::workersBusy, config.node().workers());
    this.redis = new RedisAccess(RedisLink.options(config.redis()),
        config.redis().timeout(), new Keys(config.redis().prefix(), config.redis().partitions()), new Scripts(), clock, metrics,
        new io.conveyor.redis.Replicas(config.redis().waitReplicas(), config.redis().waitTimeout()), config.limits());
    this.assignment = new Assignment(nodeId, config.redis().partitions(), config.heartbeat().ttl(), Ticker.SYSTEM);
    this.registration = new Registration(config.heartbeat().ttl().minus(config.heartbeat().interval()), Ticker.SYSTEM);
    this.cluster = new NodeCluster(config.cluster(), config.redis());
  }

  /**
   * Starts a node: an embedded Redis if needed, the pipelines checked, Vert.x (clustered if configured),
   * scripts loaded, pipelines published, then the verticles of its roles. Blocks while it reads files and
   * starts Redis, so call it from main or a test thread, never from an event loop. On failure, what was
   * started is stopped again (bounded) before the Future fails.
   */
  public static Future<Node> start(Config config, Clock clock, StepRegistry registry) {
    return start(config, clock, registry, UnaryOperator.identity());
  }

  /** The same, with the archive store wrapped by the given decorator (tests record what it is given). */
  public static Future<Node> start(Config config, Clock clock, StepRegistry registry,
                                   UnaryOperator<ArchiveStore> archive) {
    io.conveyor.trace.Tracing tracing;
    try {
      tracing = io.conveyor.trace.Tracing.fromConfig(config.tracing());
    } catch (RuntimeException e) {
      return Future.failedFuture(new io.conveyor.config.ConfigException("tracing: the OTEL_* settings are not "
          + "usable: " + e.getMessage()));
    }
    return start(config, clock, registry, archive, tracing);
  }

  /** The same, tracing into the given Tracing (tests pass one with an in-memory exporter). */
  public static Future<Node> start(Config config, Clock clock, StepRegistry registry,
                                   UnaryOperator<ArchiveStore> archive, io.conveyor.trace.Tracing tracing) {
    Node node;
    List<CompiledPipeline> pipelines;
    List<io.conveyor.schedule.ScheduleFiles.Loaded> schedules;
    try {
      // http/request steps call out under the same guard as webhooks
      registry.outbound(io.conveyor.webhook.WebhookGuard.of(config.webhooks()));
      pipelines = new PipelineParser(registry).loadDir(Path.of(config.pipelines().dir()));
      schedules = io.conveyor.schedule.ScheduleFiles.load(config.schedules().dir());
      node = new Node(config, clock, registry, EmbeddedRedis.startIfNeeded(config.redis()), archive, tracing);
    } catch (Exception e) {
      return Future.failedFuture(e);
    }
    return node.cluster.createVertx(node.metrics)
        .compose(v -> {
          node.vertx = v;
          return node.prepareRedis(pipelines, schedules);
        })
        .compose(v -> node.openArchive())
        .compose(v -> node.deployRoles())
        .map(v -> {
          log.info("node {} started: group {}, roles {}, {} workers, Redis {}{}, {} pipelines, event loops on {}",
              node.nodeId, config.node().group(), config.node().roles(), config.node().workers(), config.redis().url(),
              node.embedded != null ? " (embedded)" : "", pipelines.size(),
              node.vertx.isNativeTransportEnabled() ? "epoll (native)" : "Java NIO (" + node.vertx.unavailableNativeTransportCause() + ")");
          String hint = jitHint(Runtime.getRuntime().availableProcessors(), tieredStopAtLevel());
          if (hint != null) {
            log.info(hint);
          }
          return node;
        })
        // a node that cannot start must say so and go within seconds: its clean-up is bounded as a whole
        .recover(e -> node.stop().timeout(ABORT_BOUND.toMillis(), TimeUnit.MILLISECONDS)
            .transform(ar -> Future.failedFuture(e)));
  }

  /**
   * On two cores or fewer, where the node shares them with Redis, C2's compiler thread costs more than its code
   * saves (README, Configuration; docs/performance.md): the start log says so unless the JVM runs C1 alone.
   * Null when there is nothing to say.
   */
  static String jitHint(int processors, String tieredStopAtLevel) {
    if (processors > 2 || "1".equals(tieredStopAtLevel) || tieredStopAtLevel == null) {
      return null;
    }
    return "the JVM compiles with C2 on " + processors + " processor" + (processors == 1 ? "" : "s")
        + ": -XX:TieredStopAtLevel=1 (C1 alone) is faster here, about 1.5x the throughput and a third of the p99"
        + " in bench/peers (README, Configuration)";
  }

  /** The JVM's TieredStopAtLevel, or null where HotSpot's diagnostic bean is missing. */
  private static String tieredStopAtLevel() {
    try {
      return java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
          .getVMOption("TieredStopAtLevel").getValue();
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }

  private Future<Void> prepareRedis(List<CompiledPipeline> pipelines,
                                    List<io.conveyor.schedule.ScheduleFiles.Loaded> schedules) {
    pipelines.forEach(p -> pipelineNames.add(p.pipeline().name()));
    ownPipelines.addAll(pipelines);
    StoreContext probe = redis.open(vertx);
    return io.conveyor.redis.Scripts.forServer(probe.link()).eventually(probe::close)
        .recover(e -> Future.failedFuture(new IllegalStateException("cannot reach Redis at " + config.redis().url()
            + ": " + e.getMessage(), e)))
        .compose(scripts -> {
          redis = new RedisAccess(redis.options(), redis.timeout(), redis.keys(), scripts, redis.clock(),
              redis.meter(), redis.replicas(), redis.limits());
          return prepareRedis(redis.open(vertx), pipelines, schedules);
        });
  }

  private Future<Void> prepareRedis(StoreContext r, List<CompiledPipeline> pipelines,
                                    List<io.conveyor.schedule.ScheduleFiles.Loaded> schedules) {
    PipelineStore store = new PipelineStore(r);
    return redis.scripts().loadAll(r.link())
        .recover(e -> Future.failedFuture(new IllegalStateException("cannot load the Lua scripts into Redis at "
            + config.redis().url() + ": " + e.getMessage(), e)))
        .compose(v -> new io.conveyor.redis.LayoutStore(r).check())
        .compose(v -> Future.all(pipelines.stream().map(p -> catalog.publish(store, p, p.modified())
            .onSuccess(published -> {
              if (published.kept() != null) {
                log.info("pipeline {}: kept version {}, published after {} was last changed (its version {})",
                    p.pipeline().name(), published.kept(), config.pipelines().dir(), p.version());
              }
            })).toList()))
        .compose(v -> store.copyAll())
        .compose(v -> new io.conveyor.redis.OwnerStore(r).copyAll())
        .compose(v -> store.pipelines().onSuccess(known -> pipelines.forEach(p -> {
          List<String> missing = p.pipeline().references().stream().filter(ref -> !known.containsKey(ref)).toList();
          if (!missing.isEmpty()) {
            log.warn("pipeline {} names pipelines not published: {} (a step that reaches one fails internal-error "
                + "until it is published)", p.pipeline().name(), missing);
          }
        })).onSuccess(known -> io.conveyor.pipeline.ChildCycles.through(pipelineNames,
            io.conveyor.pipeline.ChildCycles.graph(known)).forEach(cycle -> log.warn("child pipelines form a cycle: {} "
                + "(a recursion that does not end by itself fails with depth-exceeded at limits.maxDepth {})", cycle,
                config.limits().maxDepth()))))
        .compose(v -> io.conveyor.schedule.ScheduleFiles.publish(new io.conveyor.redis.ScheduleStore(r), schedules,
            r.clock().millis()))
        .<Void>mapEmpty()
        .eventually(r::close);
  }

  /**
   * Nodes that archive, answer clients or deliver webhooks open the archive (status reads fall through to
   * it; a webhook of an archived transaction is delivered from it).
   */
  private Future<Void> openArchive() {
    if (!config.node().has("archive") && !config.node().has("api") && !config.node().has("webhooks")) {
      return Future.succeededFuture();
    }
    ArchiveStore store;
    try {
      store = archiveDecorator.apply(ArchiveStore.forConfig(vertx, config.archive()));
    } catch (ConfigException e) {
      return Future.failedFuture(e);
    }
    archive = store;
    return store.open()
        .onSuccess(v -> log.info("archive: {}", store.describe()))
        .recover(e -> Future.failedFuture(new IllegalStateException("cannot open the archive ("
            + store.describe() + "): " + e.getMessage(), e)));
  }

  /**
   * The heartbeat comes first (a node that takes work must already be known to be alive) and the edges
   * last; stop() undeploys in the reverse order.
   */
  private Future<Void> deployRoles() {
    Config.Node n = config.node();
    int partitions = redis.keys().partitions();
    // Hazelcast's word that a member left moves its partitions to their heirs at once (see Assignment)
    vertx.eventBus().localConsumer(io.conveyor.bus.Addresses.MEMBER_LEFT, m -> assignment.memberLeft(
        io.conveyor.bus.Messages.decode(m.body(), io.conveyor.bus.MemberLeft.class).clusterNodeId()));
    Transactions.Factory transactions = new Transactions.Factory(redis, catalog, config, archive, metrics, tracing,
        this::handoff);
    Future<Void> chain = deploy("heartbeat", new HeartbeatVerticle(redis, new HeartbeatVerticle.Settings(nodeId,
        config.heartbeat().interval(), config.heartbeat().ttl()), this::heartbeatInfo, this::restoreRedis,
        registration, assignment))
        // one watcher per node; its verdicts reach the start paths deployed below (each check, by message)
        .compose(v -> deploy("memory watch", new io.conveyor.node.MemoryWatchVerticle(redis,
            config.redis().memory(), nodeId, metrics)))
        // every node hears of every completion, whoever waits on it here
        .compose(v -> deploy("notify", new NotifyVerticle(redis, nodeId)))
        .compose(v -> deploy("events", new io.conveyor.bus.EventsVerticle(redis)));
    if (n.has("reaper")) {
      for (int p = 0; p < partitions; p++) {
        int part = p;
        chain = chain.compose(v -> deploy(roleName("reaper", part), new ReaperVerticle(redis,
            new ReaperVerticle.Settings(nodeId, n.group(), config.reaper().interval(), config.reaper().lease(),
                config.reaper().grace(), config.heartbeat().ttl(), outageGrace(), config.archive().delay()),
            seat(LeaderRole.REAPER, part))));
      }
    }
    if (n.has("archive")) {
      for (int p = 0; p < partitions; p++) {
        int part = p;
        chain = chain.compose(v -> deploy(roleName("archive", part), new ArchiveVerticle(redis, archive,
            config.archive(), metrics, seat(LeaderRole.ARCHIVE, part))));
      }
    }
    if (n.has("webhooks")) {
      for (int p = 0; p < partitions; p++) {
        int part = p;
        chain = chain.compose(v -> deploy(roleName("webhooks", part), new WebhookVerticle(redis, archive,
            config.webhooks(), metrics, seat(LeaderRole.WEBHOOKS, part), tracing)));
      }
    }
    if (n.has("scheduler")) {
      for (int p = 0; p < partitions; p++) {
        int part = p;
        chain = chain.compose(v -> deploy(roleName("scheduler", part), new io.conveyor.schedule.ScheduleVerticle(
            redis, transactions, config.schedules(), metrics, seat(LeaderRole.SCHEDULER, part))));
      }
    }
    if (n.has("dequeue")) {
      DequeueVerticle workers = new DequeueVerticle(redis, catalog, metrics,
          new DequeueVerticle.Settings(nodeId, n.group(), n.workers(), n.idleWait(), n.drainTime(),
              config.transactions().stepTimeout(), config.archive().delay(), config.limits()), registration,
          tracing);
      chain = chain.compose(v -> deploy("dequeue", workers, n.drainTime())).onSuccess(v -> handoff = workers.handoff());
    }
    if (n.has("api")) {
      chain = chain.compose(v -> deploy("bus API", new BusApiVerticle(transactions)));
      if (config.http().port() > 0) {
        chain = chain.compose(v -> deploy("HTTP API", new HttpApiVerticle(transactions, List.copyOf(pipelineNames),
            cluster::joined)));
      }
    }
    if (config.bridge().tcpPort() > 0) {
      chain = chain.compose(v -> deploy("TCP bridge", new BridgeVerticle(config.bridge(), config.api().keys())));
    }
    return chain;
  }

  /**
   * After an outage, how long the reaper judges nobody: a heartbeat TTL, or longer when a beat stuck on a
   * hung connection may only give up after redis.timeout and go again an interval later.
   */
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

  /**
   * After Redis came back (restarted, failed over, or empty): the scripts are loaded again at once (so
   * readiness holds and the first calls need no fallback), and each of this node's pipelines that Redis no
   * longer knows is published again. A pipeline Redis still knows is left as it is (an admin may have put a
   * newer version).
   */
  private Future<Void> restoreRedis(StoreContext r) {
    PipelineStore store = new PipelineStore(r);
    return redis.scripts().loadAll(r.link())
        .compose(v -> Future.all(ownPipelines.stream().map(p -> store.pipelineGroup(p.pipeline().name())
            .compose(group -> {
              if (group != null) {
                return Future.succeededFuture();
              }
              log.warn("Redis has lost pipeline {}: publishing it again from {}", p.pipeline().name(),
                  config.pipelines().dir());
              return catalog.publish(store, p, p.modified()).mapEmpty();
            })).toList()))
        // a partition's master may have failed over without the copies the last publication made
        .compose(v -> store.copyAll())
        .compose(v -> new io.conveyor.redis.OwnerStore(r).copyAll())
        .mapEmpty();
  }

  /** Where this node leads a role in one partition (see LeaderLoop). */
  private LeaderLoop.Seat seat(LeaderRole role, int partition) {
    return new LeaderLoop.Seat(role, partition, nodeId, assignment, Ticker.SYSTEM);
  }

  /** A leader role's verticle: named by its partition when there are several. */
  private String roleName(String role, int partition) {
    return redis.keys().partitions() == 1 ? role : role + " (partition " + partition + ")";
  }

  /** What the heartbeat key says about this node, read anew at each beat. */
  private JsonObject heartbeatInfo() {
    return new JsonObject()
        .put("nodeId", nodeId)
        .put("group", config.node().group())
        .put("roles", new JsonArray(config.node().roles()))
        .put("host", config.cluster().host())
        .put("httpPort", config.http().port())
        .put("version", BuildInfo.version())
        .put("started", started)
        .put("beat", Instant.ofEpochMilli(clock.millis()).toString())
        .put("busy", metrics.workersBusy())
        .put("workers", config.node().workers())
        .put("stepTypes", new JsonArray(new TreeSet<>(registry.names()).stream().toList()))
        .put("clusterNodeId", cluster.clusterNodeId())
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
  private volatile io.conveyor.redis.Handoff handoff = io.conveyor.redis.Handoff.NONE;

  public io.conveyor.redis.Handoff handoff() {
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
