package io.conveyor.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** The fat jar run as its own process, with its output collected (and copied to target/ for a reader). */
public final class NodeProcess implements AutoCloseable {
  private final Process process;
  private final List<String> lines = new CopyOnWriteArrayList<>();

  private NodeProcess(Process process, Path log) {
    this.process = process;
    Thread reader = new Thread(() -> copy(log), "node-output");
    reader.setDaemon(true);
    reader.start();
  }

  public static NodeProcess start(String name, Map<String, String> env) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m"));
    cmd.addAll(NodeJvm.options()); // C1 alone and a class-data archive: a start costs a third of the CPU
    cmd.addAll(List.of("-jar", "target/conveyor.jar"));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(env);
    return new NodeProcess(pb.start(), Path.of("target", name + ".log"));
  }

  /** A node started by a command of the caller's (e.g. the README's) in a directory of its choosing. */
  public static NodeProcess start(String name, List<String> command, Path dir, Map<String, String> env)
      throws IOException {
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
    pb.environment().keySet().removeIf(k -> k.startsWith("CONVEYOR_") && !k.startsWith("CONVEYOR_TEST_"));
    pb.environment().putAll(env);
    return new NodeProcess(pb.start(), Path.of("target", name + ".log").toAbsolutePath());
  }

  public long pid() {
    return process.pid();
  }

  public boolean alive() {
    return process.isAlive();
  }

  private void copy(Path log) {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
        StandardCharsets.UTF_8)); PrintWriter out = new PrintWriter(Files.newBufferedWriter(log))) {
      String line;
      while ((line = in.readLine()) != null) {
        lines.add(line);
        out.println(line);
        out.flush();
      }
    } catch (IOException e) {
      lines.add("(output reader stopped: " + e.getMessage() + ")");
    }
  }

  /** Waits (bounded) for a line containing the text; fails early if the process exits. */
  public String awaitLine(String text, Duration bound) {
    return Eventually.until(bound, "a line with '" + text + "' in the node's output (seen: " + lines + ")",
        () -> {
          String hit = lines.stream().filter(l -> l.contains(text)).findFirst().orElse(null);
          if (hit == null && !process.isAlive()) {
            throw new AssertionError("the node exited with " + process.exitValue() + ": " + lines);
          }
          return hit;
        }, l -> l != null);
  }

  /** Sends SIGTERM and waits for the exit code. */
  public int terminate(Duration bound) throws InterruptedException {
    process.destroy();
    return stopped(bound);
  }

  /** SIGTERM to every node at once, then waits (bounded, each) for each to exit: stops run side by side. */
  public static void terminateAll(List<NodeProcess> nodes, Duration bound) throws InterruptedException {
    nodes.forEach(n -> n.process.destroy());
    for (NodeProcess n : nodes) {
      n.stopped(bound);
    }
  }

  /** Waits (bounded) for the exit code after SIGTERM; SIGKILL and an error if it does not come. */
  private int stopped(Duration bound) throws InterruptedException {
    if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("the node did not stop within " + bound + " of SIGTERM: " + lines);
    }
    return process.exitValue();
  }

  /** Waits (bounded) for the process to end by itself, and answers its exit code. */
  public int awaitExit(Duration bound) throws InterruptedException {
    if (!process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("the node did not exit within " + bound + ": " + lines);
    }
    return process.exitValue();
  }

  /** Sends a signal by name (STOP, CONT, …) with kill(1). */
  public void signal(String name) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
    if (kill.waitFor() != 0) {
      throw new IllegalStateException("kill -" + name + " failed");
    }
  }

  /**
   * SIGSTOP, then waits until every thread of the node is stopped: kill(2) only queues the signal, and on a loaded
   * machine the node's threads can run on for a while (an event loop that takes a reply and answers it) before the
   * group stop reaches them. A test that acts "while the node is paused" must act after that.
   */
  public void pause() throws IOException, InterruptedException {
    signal("STOP");
    Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
    Eventually.until(Duration.ofSeconds(10), "every thread of node " + process.pid() + " stopped", () -> {
      try (java.util.stream.Stream<Path> threads = Files.list(tasks)) {
        return threads.filter(t -> !stopped(t)).count();
      } catch (IOException e) {
        return -1L;
      }
    }, running -> running == 0);
  }

  /** A thread's state in /proc/<pid>/task/<tid>/stat: the letter after the name in parentheses. */
  private static boolean stopped(Path thread) {
    try {
      String stat = Files.readString(thread.resolve("stat"));
      char state = stat.charAt(stat.lastIndexOf(')') + 2);
      return state == 'T' || state == 't' || state == 'Z' || state == 'X';
    } catch (IOException e) {
      return true; // the thread ended
    }
  }

  /** SIGKILL: the node gets no chance to clean up, as in a crash. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  public List<String> lines() {
    return lines;
  }

  @Override
  public void close() {
    process.destroyForcibly();
  }
}
