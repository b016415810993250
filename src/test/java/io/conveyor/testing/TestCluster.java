package io.conveyor.testing;

import io.conveyor.BusTrust;
import io.conveyor.HazelcastConfig;
import io.conveyor.config.Config;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
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

  /** A clustered Vert.x on the bus's mutual TLS with the given trust, as a user's application on such a cluster. */
  public static Vertx join(String name, BusTrust trust) {
    try {
      VertxOptions options = new VertxOptions();
      trust.secure(options.getEventBusOptions().setHost("127.0.0.1"));
      return Vertx.builder().with(options).withClusterManager(trust.attested(new HazelcastClusterManager(
          HazelcastConfig.load("cluster.xml", name)))).buildClustered().await();
    } catch (FileNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A member's trust on the bus, from a pair and CA of TestCerts. */
  public static BusTrust trust(TestCerts.Pair pair, java.nio.file.Path ca) {
    return BusTrust.load(new Config.BusTls(pair.cert().toString(), pair.key().toString(), ca.toString()),
        java.time.Clock.systemUTC());
  }
}
