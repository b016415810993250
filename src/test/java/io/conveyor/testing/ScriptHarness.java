package io.conveyor.testing;

import io.conveyor.redis.Keys;
import io.conveyor.redis.RedisLink;
import io.conveyor.redis.Scripts;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Vertx;

/** The stores on their own prefix and a hand-moved clock: the scripts run exactly as the node runs them. */
public final class ScriptHarness implements AutoCloseable {
  public final String prefix = TestRedis.newPrefix();
  public final Keys keys = new Keys(prefix, TestRedis.partitions());
  public final MutableClock clock = new MutableClock(1_800_000_000_000L);
  public final Scripts scripts = new Scripts();
  public final Vertx vertx = Vertx.vertx();
  public final RedisLink link = new RedisLink(vertx, TestRedis.options(10_000));
  public final Stores store = new Stores(new StoreContext(link, keys, scripts, clock));

  /**
   * Arranges a published pipeline as start and hop read it: pipelineH and, with several partitions, the
   * copy in each partition (what PipelineStore.putPipeline writes, without a definition).
   */
  public void pipeline(String name, String version, String group, boolean transactionType) {
    java.util.Set<String> copies = new java.util.LinkedHashSet<>(java.util.List.of(keys.pipelineH(name)));
    keys.all().forEach(p -> copies.add(keys.pipelineInPartitionH(p, name)));
    for (String key : copies) {
      TestRedis.cmd("HSET", key, "version", version, "nodeGroup", group, "isTransactionType",
          transactionType ? "1" : "0");
    }
  }

  /** A readable txId in partition p, e.g. "tx-0002-a" (Keys.partitionOf reads its first four hex digits). */
  public static String txId(int p, String name) {
    return String.format("tx-%04x-%s", p, name);
  }

  @Override
  public void close() {
    TestRedis.drop(prefix);
    link.close().await();
    vertx.close().await();
  }
}
