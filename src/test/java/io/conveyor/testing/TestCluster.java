package io.conveyor.testing;

import io.conveyor.HazelcastConfig;
import io.vertx.core.Vertx;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.FileNotFoundException;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/** Clustered Vert.x for tests: the shipped cluster.xml with a cluster name of the test's own. */
public final class TestCluster {
  private TestCluster() {
  }

  /** A cluster name no other test run (or dev node) shares. */
  public static String newName() {
    return "test-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
  }

  /** A plain clustered Vert.x in the named cluster, as a user's own application would run. */
  public static Vertx join(String name) {
    try {
      return Vertx.builder().withClusterManager(new HazelcastClusterManager(HazelcastConfig.load("cluster.xml", name)))
          .buildClustered().await();
    } catch (FileNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }
}
