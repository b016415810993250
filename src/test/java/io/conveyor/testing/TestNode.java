package io.conveyor.testing;

import io.conveyor.Node;
import io.conveyor.domain.Transactions;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigLoader;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.StepRegistry;
import io.conveyor.redis.Keys;
import io.conveyor.redis.RedisLink;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * A node on its own key prefix, not clustered, with the pipelines a test writes. The test talks to it
 * through Transactions on a link of its own, the way the event-bus API does.
 */
public final class TestNode implements AutoCloseable {
  public final String prefix;
  /** The node's key names (with its partitions once it has started). */
  public Keys keys;
  private final Path pipelines;
  private final Map<String, String> env = new HashMap<>();
  private Node node;
  private java.time.Clock clock = Clock.systemUTC();
  private Vertx clientVertx;
  private RedisLink link;
  public Stores store;
  public Transactions transactions;

  public TestNode() {
    this(TestRedis.newPrefix(), newPipelineDir());
  }

  /** A node on a key prefix of the test's choosing (a hash tag, for a Redis Cluster the test starts itself). */
  public static TestNode withPrefix(String prefix) {
    return new TestNode(prefix, newPipelineDir());
  }

  /** Another node of the same system: the same key prefix and pipeline files. */
  public TestNode sibling() {
    TestNode n = new TestNode(prefix, pipelines);
    n.env.putAll(env);
    n.ownRedis = ownRedis;
    n.tracing = tracing;
    return n;
  }

  private static Path newPipelineDir() {
    try {
      return Files.createTempDirectory("pipelines");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private TestNode(String prefix, Path pipelines) {
    this.prefix = prefix;
    this.keys = new Keys(prefix);
    this.pipelines = pipelines;
    env.putAll(TestRedis.env());
    env.put("CONVEYOR_REDIS_PREFIX", prefix);
    env.put("CONVEYOR_REDIS_EMBEDDED", "never");
    env.put("CONVEYOR_CLUSTER_ENABLED", "false");
    env.put("CONVEYOR_PIPELINES_DIR", pipelines.toString());
    env.put("CONVEYOR_SCHEDULES_DIR", pipelines.resolve("schedules").toString());
    env.put("CONVEYOR_NODE_IDLE_WAIT", "1s");
    env.put("CONVEYOR_HTTP_PORT", "0"); // off unless a test asks for it
    // KeyedApi's two keys, which the event-bus API asks for too; a test may set others
    env.put("CONVEYOR_API_KEYS", "acme:client:" + KeyedApi.CLIENT + ",ops:admin:" + KeyedApi.ADMIN);
    // one embedded archive per system under test, shared by siblings
    env.put("CONVEYOR_ARCHIVE_URL", "h2:target/test-archives/" + prefix.replaceAll("[^A-Za-z0-9]", "_") + "/archive");
  }

  private java.util.function.UnaryOperator<io.conveyor.database.ArchiveStore> archiveDecorator =
      java.util.function.UnaryOperator.identity();

  /** Wraps the node's archive store (a test records what the node writes). */
  public TestNode archive(java.util.function.UnaryOperator<io.conveyor.database.ArchiveStore> decorator) {
    this.archiveDecorator = decorator;
    return this;
  }

  private io.conveyor.trace.Tracing tracing;

  /** Traces into the given Tracing (e.g. an SDK with an in-memory exporter) instead of config's. */
  public TestNode tracing(io.conveyor.trace.Tracing t) {
    this.tracing = t;
    return this;
  }

  /** Sets a config key by its environment name, e.g. set("NODE_WORKERS", "2"). */
  public TestNode set(String name, String value) {
    env.put("CONVEYOR_" + name, value);
    return this;
  }

  /**
   * Puts the node on a Redis of the test's own (a cluster or sentinels it starts, e.g. to kill a server);
   * the test's own link then goes there too, and the prefix is not dropped after (the Redis goes away).
   */
  public TestNode redis(String mode, java.util.List<String> endpoints, String masterName) {
    ownRedis = true;
    env.remove("CONVEYOR_REDIS_PARTITIONS"); // the mode's default, unless the test sets it
    env.put("CONVEYOR_REDIS_MODE", mode);
    env.put("CONVEYOR_REDIS_ENDPOINTS", String.join(",", endpoints));
    env.put("CONVEYOR_REDIS_URL", endpoints.get(0));
    env.put("CONVEYOR_REDIS_MASTER_NAME", masterName);
    return this;
  }

  private boolean ownRedis;

  /** Writes a pipeline file from a JSON text (single quotes allowed for readability). */
  public TestNode pipeline(String name, String json) {
    try {
      Files.writeString(pipelines.resolve(name + ".json"), json.replace('\'', '"'));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  /** Writes a schedule file (schedules.dir) from a JSON text (single quotes allowed for readability). */
  public TestNode schedule(String id, String json) {
    try {
      Path dir = pipelines.resolve("schedules");
      Files.createDirectories(dir);
      Files.writeString(dir.resolve(id + ".json"), json.replace('\'', '"'));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  /** The clock the node runs on (the test's own, to move time by hand). */
  public TestNode clock(java.time.Clock c) {
    this.clock = c;
    return this;
  }

  public Config config() {
    return ConfigLoader.load(null, env);
  }

  public TestNode start(StepRegistry registry) {
    Config config = config();
    keys = new Keys(prefix, config.redis().partitions());
    node = (tracing == null ? Node.start(config, clock, registry, archiveDecorator)
        : Node.start(config, clock, registry, archiveDecorator, tracing)).await();
    clientVertx = Vertx.vertx();
    // the test's own link goes straight to Redis, whatever the node's URL (a test may put a proxy there)
    link = new RedisLink(clientVertx, ownRedis ? RedisLink.options(config.redis(), config.security().redisTls())
        : TestRedis.options(10_000),
        ownRedis ? config.redis().timeout() : RedisLink.DEFAULT_TIMEOUT);
    // the node's clock: a start stamped on another clock would count in another stats slot, or be due at
    // another time, than the node's own writes
    StoreContext context = new StoreContext(link, keys, node.redis().scripts(), clock,
        io.conveyor.redis.Replicas.NONE, config.limits());
    store = new Stores(context);
    // the test's own starts are traced as the node's are, when the test gave a Tracing
    transactions = new Transactions(context, node.catalog(), config,
        io.vertx.core.Future.succeededFuture(node.archive()), new io.conveyor.metrics.NodeMetrics(false),
        tracing == null ? io.conveyor.trace.Tracing.OFF : tracing);
    return this;
  }

  /** A Transactions service on the node's own Redis settings (e.g. redis.waitReplicas), from the test's thread. */
  public Transactions nodeTransactions() {
    return new Transactions(node.redis().open(clientVertx), node.catalog(), config(),
        io.vertx.core.Future.succeededFuture(node.archive()), new io.conveyor.metrics.NodeMetrics(false));
  }

  public Node node() {
    return node;
  }

  public String start(String type, JsonObject input) {
    return transactions.start(new JsonObject().put("type", type).put("owner", "acme").put("input", input))
        .await().txId();
  }

  /** A count summed over the node's partitions, e.g. total("ZCARD", keys::processingZ). */
  public long total(String command, java.util.function.IntFunction<String> keyOf) {
    long n = 0;
    for (int p : keys.all()) {
      n += TestRedis.cmd(command, keyOf.apply(p)).toLong();
    }
    return n;
  }

  /**
   * Waits (bounded) until the transaction is final and answers its summary: from Redis, or from the archive
   * once Redis no longer holds it (a node archiving at once may move it before the first look).
   */
  /** One field of the transaction's state as Redis holds it now, or null. */
  public String stateField(String txId, String name) {
    io.vertx.redis.client.Response r = TestRedis.cmd("HGET", keys.stateH(txId), name);
    return r == null ? null : r.toString();
  }

  /** Waits (10 s at most) until a field of the transaction's state reads value. */
  public void awaitField(String txId, String name, String value) {
    Eventually.until(Duration.ofSeconds(10), txId + " " + name + " " + value,
        () -> String.valueOf(stateField(txId, name)), value::equals);
  }

  public TxSummary awaitFinal(String txId) {
    return awaitFinal(txId, Duration.ofSeconds(10));
  }

  /** The same, waiting up to bound. */
  public TxSummary awaitFinal(String txId, Duration bound) {
    return Eventually.until(bound, txId + " to finish", () -> {
      TxSummary live = store.reads.getState(txId).await();
      if (live != null || node == null || node.archive() == null) {
        return live;
      }
      var archived = node.archive().find(txId).await();
      return archived == null ? null : archived.summary();
    }, s -> s != null && s.status().isFinal());
  }

  /** Stops the node and the test's client, keeping the data (a sibling starts on it, as after a restart). */
  public void stopKeepingData() {
    node.stop().await();
    node = null;
    clientVertx.close().await();
    clientVertx = null;
  }

  @Override
  public void close() {
    if (node != null) {
      node.stop().await();
    }
    if (clientVertx != null) {
      clientVertx.close().await();
    }
    if (!ownRedis) {
      TestRedis.drop(prefix);
    }
  }
}
