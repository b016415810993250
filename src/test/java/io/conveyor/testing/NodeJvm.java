package io.conveyor.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The JVM options of the node processes the integration tests start: the build's options for test JVMs (pom.xml,
 * test.jvm, handed over as conveyor.test.node.jvm) and a class-data archive of the fat jar (AppCDS), made once by a
 * first node that starts and stops. A node then maps the classes it loads instead of parsing them: about 1.7 s of
 * CPU to its "started" line instead of 3 s, some 35 times a run. Without an archive (it could not be made) nodes
 * start as before.
 */
final class NodeJvm {
  private static final Path JAR = Path.of("target", "conveyor.jar");
  private static final Path ARCHIVE = Path.of("target", "node-classes.jsa");
  private static List<String> options;

  private NodeJvm() {
  }

  /** The options, the archive made first if the jar is newer than it (once per test JVM). */
  static synchronized List<String> options() {
    if (options == null) {
      List<String> base = new ArrayList<>(List.of(System.getProperty("conveyor.test.node.jvm", "").trim()
          .split("\\s+")));
      base.removeIf(String::isEmpty);
      options = new ArrayList<>(base);
      // another test JVM of the build (failsafe's second fork) may be making or reading the archive: one at a time
      try (CrossJvmLock making = CrossJvmLock.hold("node-classes")) {
        if (archived(base)) {
          options.add("-XX:SharedArchiveFile=" + ARCHIVE);
        }
      }
    }
    return options;
  }

  private static boolean archived(List<String> base) {
    try {
      if (Files.exists(ARCHIVE) && Files.getLastModifiedTime(ARCHIVE).compareTo(Files.getLastModifiedTime(JAR)) > 0) {
        return true;
      }
      Files.deleteIfExists(ARCHIVE);
      train(base);
      return Files.exists(ARCHIVE);
    } catch (IOException | InterruptedException | AssertionError e) {
      System.err.println("node processes start without a class-data archive: " + e);
      return false;
    }
  }

  /** A clustered node on a prefix of its own runs until "started" and stops on SIGTERM; the JVM writes the archive. */
  private static void train(List<String> base) throws IOException, InterruptedException {
    String prefix = TestRedis.newPrefix();
    Path dir = Files.createTempDirectory("node-cds");
    Map<String, String> env = new HashMap<>(TestRedis.env());
    env.putAll(Map.of("CONVEYOR_REDIS_PREFIX", prefix, "CONVEYOR_CLUSTER_NAME", TestCluster.newName(),
        "CONVEYOR_HTTP_PORT", Integer.toString(TestRedis.freePort()), "CONVEYOR_ARCHIVE_URL",
        "h2:" + dir.resolve("archive"), "CONVEYOR_NODE_DRAIN_TIME", "200ms"));
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m"));
    command.addAll(base);
    command.addAll(List.of("-XX:ArchiveClassesAtExit=" + ARCHIVE, "-jar", JAR.toString()));
    try (NodeProcess node = NodeProcess.start("node-classes", command, Path.of("").toAbsolutePath(), env)) {
      node.awaitLine(" started: group master", Duration.ofSeconds(90));
      node.terminate(Duration.ofSeconds(60));
    } finally {
      TestRedis.drop(prefix);
    }
  }
}
