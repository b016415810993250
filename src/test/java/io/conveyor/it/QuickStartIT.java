package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.NodeProcess;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README's quick start, as written: its start command (bin/conveyor), run in a copy of the project's conf/,
 * cluster.xml and launcher, starts a
 * node whose listening sockets (ss -ltnp) are exactly the ones README's "Listeners" lists, on the
 * addresses it gives.
 */
class QuickStartIT {
  @Test
  void the_quick_start_node_listens_only_where_the_readme_says() throws Exception {
    List<String> readme = Files.readAllLines(Path.of("README.md"));
    String line = readme.stream().filter(l -> l.startsWith("mvn -q -DskipTests package && bin/conveyor"))
        .findFirst().orElseThrow(() -> new AssertionError("README's quick start lost its start command"));
    List<String> command = new ArrayList<>(List.of(line.substring(line.indexOf("&& ") + 3, line.indexOf('#'))
        .trim().split("\\s+")));
    assertEquals(List.of("bin/conveyor"), command, line);

    Path dir = Files.createTempDirectory("quick-start");
    copy(Path.of("conf"), dir.resolve("conf")); // what a node reads from the project's root
    Files.copy(Path.of("cluster.xml"), dir.resolve("cluster.xml"));
    Files.createDirectories(dir.resolve("bin"));
    for (String script : List.of("conveyor", "jvm-flags.sh")) { // the launcher and the flags it sources
      Files.copy(Path.of("bin", script), dir.resolve("bin").resolve(script),
          java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
    }
    Files.createDirectories(dir.resolve("target"));
    Files.createSymbolicLink(dir.resolve("target/conveyor.jar"), Path.of("target/conveyor.jar").toAbsolutePath());
    command.set(0, dir.resolve("bin/conveyor").toString());
    Map<String, String> env = new HashMap<>();
    env.put("JAVA_HOME", System.getProperty("java.home")); // the launcher's java: this JDK's
    // a key prefix of the test's own, removed after: the quick start's default (conveyor:) is a developer's own
    String prefix = io.conveyor.testing.TestRedis.newPrefix();
    env.put("CONVEYOR_REDIS_PREFIX", prefix);
    int http = 8080;
    if (!free(http)) {
      // another program holds the default port on this machine: the node is moved, the check stays
      http = freePort();
      env.put("CONVEYOR_HTTP_PORT", Integer.toString(http));
      System.out.println("quick start: port 8080 is taken here; the node's HTTP API goes to " + http);
    }
    try (NodeProcess node = NodeProcess.start("quick-start", command, dir, env)) {
      node.awaitLine(" started: group master", Duration.ofSeconds(90));
      // the launcher execs the JVM (so the pid is the node's) with C1 alone on two cores or fewer, else the defaults
      String jvm = Files.readString(Path.of("/proc", Long.toString(node.pid()), "cmdline")).replace('\0', ' ');
      assertTrue(jvm.contains("-jar " + dir.resolve("target/conveyor.jar")), jvm);
      assertEquals(Runtime.getRuntime().availableProcessors() <= 2, jvm.contains("-XX:TieredStopAtLevel=1"), jvm);
      List<String> listeners = listeners(node.pid());
      System.out.println("quick start: listening on " + listeners);
      List<String> unexplained = new ArrayList<>(listeners);
      assertTrue(unexplained.remove("0.0.0.0:" + http), "the HTTP API on 0.0.0.0:" + http + ": " + listeners);
      String hazelcast = unexplained.stream().filter(a -> a.startsWith("127.0.0.1:")
          && port(a) >= 5701 && port(a) <= 5720).findFirst().orElseThrow(
              () -> new AssertionError("Hazelcast on 127.0.0.1:5701-5720: " + listeners));
      unexplained.remove(hazelcast);
      // the rest are on ports the system picks: the Vert.x event bus (cluster.host) and the embedded archive's
      // H2 server; both on 127.0.0.1
      assertEquals(2, unexplained.size(), "the event bus and the H2 server, nothing else: " + listeners);
      assertTrue(unexplained.stream().allMatch(a -> a.startsWith("127.0.0.1:")), "on 127.0.0.1: " + listeners);
      assertTrue(node.terminate(Duration.ofSeconds(60)) >= 0);
    } finally {
      io.conveyor.testing.TestRedis.drop(prefix);
    }
  }

  /** This process's listening TCP sockets as address:port, from ss. */
  private static List<String> listeners(long pid) throws IOException, InterruptedException {
    Process ss = new ProcessBuilder("ss", "-ltnpH").redirectErrorStream(true).start();
    String out = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(ss.waitFor(10, TimeUnit.SECONDS) && ss.exitValue() == 0, out);
    List<String> mine = new ArrayList<>();
    for (String l : out.split("\n")) {
      if (l.contains("pid=" + pid + ",")) {
        String local = l.trim().split("\\s+")[3];
        mine.add(local.replace("[::ffff:", "").replace("]", "").replace("*:", "0.0.0.0:"));
      }
    }
    return mine;
  }

  private static int port(String address) {
    return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
  }

  private static boolean free(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress("0.0.0.0", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static int freePort() {
    return io.conveyor.testing.TestRedis.freePort();
  }

  private static void copy(Path from, Path to) throws IOException {
    try (Stream<Path> all = Files.walk(from)) {
      for (Path p : (Iterable<Path>) all::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }
}
