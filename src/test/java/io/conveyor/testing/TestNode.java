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
  public final Keys keys;
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

  /** Another node of the same system: the same key prefix and pipeline files. */
  public TestNode sibling() {
    TestNode n = new TestNode(prefix, pipelines);
    n.env.putAll(env);
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
    env.put("CONVEYOR_REDIS_URL", TestRedis.url());
    env.put("CONVEYOR_REDIS_PREFIX", prefix);
    env.put("CONVEYOR_REDIS_EMBEDDED", "never");
    env.put("CONVEYOR_CLUSTER_ENABLED", "false");
    env.put("CONVEYOR_PIPELINES_DIR", pipelines.toString());
    env.put("CONVEYOR_NODE_IDLE_WAIT", "1s");
    env.put("CONVEYOR_HTTP_PORT", "0"); // off unless a test asks for it
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

  /** Sets a config key by its environment name, e.g. set("NODE_WORKERS", "2"). */
  public TestNode set(String name, String value) {
    env.put("CONVEYOR_" + name, value);
    return this;
  }

  /** Writes a pipeline file from a JSON text (single quotes allowed for readability). */
  public TestNode pipeline(String name, String json) {
    try {
      Files.writeString(pipelines.resolve(name + ".json"), json.replace('\'', '"'));
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
    node = Node.start(config, clock, registry, archiveDecorator).await();
    clientVertx = Vertx.vertx();
    // the test's own link goes straight to Redis, whatever the node's URL (a test may put a proxy there)
    link = new RedisLink(clientVertx, RedisLink.options(TestRedis.url(), 10_000));
    StoreContext context = new StoreContext(link, keys, node.redis().scripts(), Clock.systemUTC());
    store = new Stores(context);
    transactions = new Transactions(context, node.catalog(), config,
        io.vertx.core.Future.succeededFuture(node.archive()), new io.conveyor.metrics.NodeMetrics(false));
    return this;
  }

  public Node node() {
    return node;
  }

  public String start(String type, JsonObject input) {
    return transactions.start(new JsonObject().put("type", type).put("owner", "acme").put("input", input))
        .await().txId();
  }

  /** Waits (bounded) until the transaction is final and answers its summary. */
  public TxSummary awaitFinal(String txId) {
    return Eventually.until(Duration.ofSeconds(10), txId + " to finish", () -> store.reads.getState(txId).await(),
        s -> s != null && s.status().isFinal());
  }

  @Override
  public void close() {
    if (node != null) {
      node.stop().await();
    }
    if (clientVertx != null) {
      clientVertx.close().await();
    }
    TestRedis.drop(prefix);
  }
}
