package io.conveyor;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.config.ConfigException;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A node refuses to start on a cluster config it cannot use, saying which file and why. */
class NodeStartTest {
  @TempDir
  Path dir;

  private Throwable startFailure(String clusterConfig) {
    try (TestNode node = new TestNode().set("CLUSTER_ENABLED", "true").set("CLUSTER_CONFIG", clusterConfig)) {
      return assertThrows(Throwable.class, () -> node.start(new TestSteps().registry()));
    }
  }

  @Test
  void a_missing_cluster_file_stops_the_node_naming_it() {
    Throwable e = startFailure(dir.resolve("nope.xml").toString());
    assertInstanceOf(ConfigException.class, e);
    assertTrue(e.getMessage().startsWith("cluster.config: cannot load Hazelcast config " + dir.resolve("nope.xml")),
        e.getMessage());
  }

  @Test
  void a_broken_cluster_file_stops_the_node_naming_it() throws IOException {
    Path broken = dir.resolve("broken.xml");
    Files.writeString(broken, "<hazelcast><network><join>");
    Throwable e = startFailure(broken.toString());
    assertInstanceOf(ConfigException.class, e);
    assertTrue(e.getMessage().contains(broken.toString()), e.getMessage());
  }
}
