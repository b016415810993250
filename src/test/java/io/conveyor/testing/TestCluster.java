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
    return join(name, "cluster.xml");
  }

  /** The same with a Hazelcast file of its own (e.g. a PortRange's). */
  public static Vertx join(String name, String file) {
    try {
      return Vertx.builder().withClusterManager(new HazelcastClusterManager(HazelcastConfig.load(file, name)))
          .buildClustered().await();
    } catch (FileNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A member port range of a test's own: the shipped cluster.xml with its 20 ports moved to a block found free
   * (above the ports FreePorts hands out, below Linux's ephemeral range). For a test that holds ports of its range
   * with programs that never answer (ClusteredNodeTest): on the shared 5701-5720 those stalled the joins of every
   * other test JVM's members (BusNodeRuleTest took 207 s instead of 15 in two surefire forks).
   */
  public record PortRange(int base, String file) {
  }

  public static PortRange ownPorts() {
    try {
      String shipped = java.nio.file.Files.readString(java.nio.file.Path.of("cluster.xml"));
      for (int tries = 0; tries < 200; tries++) {
        int base = 23_000 + 20 * ThreadLocalRandom.current().nextInt(480);
        if (java.util.stream.IntStream.range(base, base + 20).allMatch(TestCluster::free)) {
          String moved = shipped.replace(">5701</port>", ">" + base + "</port>");
          if (moved.equals(shipped)) {
            throw new IllegalStateException("cluster.xml has no <port …>5701</port> to move");
          }
          java.nio.file.Path file = java.nio.file.Path.of("target", "cluster-" + base + ".xml");
          java.nio.file.Files.createDirectories(file.getParent());
          java.nio.file.Files.writeString(file, moved);
          return new PortRange(base, file.toString());
        }
      }
      throw new IllegalStateException("no 20 free ports in a row in 23000-32599 after 200 tries");
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static boolean free(int port) {
    try (java.net.ServerSocket s = new java.net.ServerSocket()) {
      s.bind(new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (java.io.IOException e) {
      return false;
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
