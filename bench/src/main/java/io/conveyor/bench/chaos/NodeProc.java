package io.conveyor.bench.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One node: the fat jar in a process of its own, its output copied to a log file and read for two facts,
 * its nodeId (from "node … started") and its Hazelcast view (the last "Members {size:N" line, which
 * Hazelcast logs at every membership change when com.hazelcast.internal.cluster logs at INFO).
 */
final class NodeProc {
  private static final Pattern STARTED = Pattern.compile("node (node-\\w+) started");
  private static final Pattern MEMBERS = Pattern.compile("Members \\{size:(\\d+)");
  final String name;
  final int httpPort;
  private final Process process;
  private final Runnable undo;
  private volatile String nodeId;
  private volatile int members;
  private volatile String lastLine = "";
  private volatile boolean paused;
  private volatile boolean dead;

  private NodeProc(String name, int httpPort, Process process, Path log) {
    this.name = name;
    this.httpPort = httpPort;
    this.process = process;
    this.undo = Teardown.process(process);
    Thread reader = new Thread(() -> copy(log), name + "-output");
    reader.setDaemon(true);
    reader.start();
  }

  static NodeProc start(String name, int httpPort, Map<String, String> env, Path logback, Path log)
      throws IOException {
    List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "-Dlogback.configurationFile=" + logback, "-jar", "target/conveyor.jar");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(env);
    pb.environment().put("CONVEYOR_HTTP_PORT", Integer.toString(httpPort));
    return new NodeProc(name, httpPort, pb.start(), log);
  }

  private void copy(Path log) {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
        StandardCharsets.UTF_8)); PrintWriter out = new PrintWriter(Files.newBufferedWriter(log))) {
      String line;
      while ((line = in.readLine()) != null) {
        out.println(line);
        out.flush();
        lastLine = line;
        Matcher m = STARTED.matcher(line);
        if (nodeId == null && m.find()) {
          nodeId = m.group(1);
        }
        Matcher h = MEMBERS.matcher(line);
        if (h.find()) {
          members = Integer.parseInt(h.group(1));
        }
      }
    } catch (IOException e) {
      lastLine = "(output reader stopped: " + e.getMessage() + ")";
    }
  }

  /** Waits (bounded) for the node to say it started; fails if it exits first. */
  String awaitStarted(long boundMs) throws IOException {
    long deadline = System.currentTimeMillis() + boundMs;
    while (nodeId == null) {
      if (!process.isAlive()) {
        throw new IOException(name + " exited with " + process.exitValue() + " before it started: " + lastLine);
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IOException(name + " did not start within " + boundMs + " ms: " + lastLine);
      }
      Procs.sleep(100);
    }
    return nodeId;
  }

  String nodeId() {
    return nodeId;
  }

  long pid() {
    return process.pid();
  }

  /** The member count of this node's last Hazelcast view (0 before the first). */
  int members() {
    return members;
  }

  /** Neither killed nor paused: it should answer. */
  boolean live() {
    return !dead && !paused && process.isAlive();
  }

  /** Not killed: its process exists (it may be paused). */
  boolean running() {
    return !dead && process.isAlive();
  }

  void kill() throws InterruptedException {
    dead = true;
    process.destroyForcibly();
    process.waitFor();
    undo.run();
  }

  void pause() {
    paused = true;
    Procs.signal(process.pid(), "STOP");
  }

  void resume() {
    Procs.signal(process.pid(), "CONT");
    paused = false;
  }

  void close() {
    dead = true;
    undo.run();
  }
}
