package io.conveyor.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The redis-server processes of one fixture: children of this JVM (so each has a known pid) on free ports, each
 * writing its log to the fixture's temp dir. Close stops them all; so does a shutdown hook when a test crashes.
 * A JVM killed with -9 runs no hook: `pgrep -af redis-server` shows what it left.
 */
final class RedisProcesses implements AutoCloseable {
  static final String SERVER = "/usr/bin/redis-server";
  /** The bound on each wait while a fixture starts (a start, a sync, a gossip round take a second or two). */
  static final Duration READY = Duration.ofSeconds(30);
  /** How often a wait asks the servers again; each ask is a redis-cli process. */
  static final Duration POLL = Duration.ofMillis(100);
  private static final Duration STOP_GRACE = Duration.ofSeconds(3);

  final Path dir;
  private final List<Integer> ports = new CopyOnWriteArrayList<>();
  private final Map<Integer, Process> byPort = new ConcurrentHashMap<>();
  private final Thread hook = new Thread(this::stopAndDelete, "redis-fixture-stop");

  RedisProcesses(String dirPrefix) {
    try {
      dir = Files.createTempDirectory(dirPrefix).toRealPath();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** The arguments every data server takes: no persistence, and nothing that delays a sync or a stop. */
  List<String> serverArgs(int port) {
    // diskless sync waits 5 s for more replicas by default; a SIGTERM waits up to 10 s for lagging replicas
    return new ArrayList<>(List.of(SERVER, "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "",
        "--appendonly", "no", "--dir", dir.toString(), "--repl-diskless-sync-delay", "0",
        "--shutdown-on-sigterm", "now"));
  }

  /**
   * Starts the command made for a free port (with its cluster bus port, 10000 above, free too when asked) and
   * waits until that port answers as this very process. A port taken in between is tried again elsewhere.
   */
  int start(boolean clusterBus, IntFunction<List<String>> command) {
    for (int attempt = 1; ; attempt++) {
      int port = FreePorts.next(clusterBus);
      Process p = launch(port, command.apply(port));
      if (answersAsItself(port, p)) {
        ports.add(port);
        byPort.put(port, p);
        return port;
      }
      String log = tail(port);
      if (attempt == 3 || !log.contains("Address already in use")) {
        throw new IllegalStateException("redis-server on port " + port + " exited with " + p.exitValue()
            + "; its log ends:\n" + log);
      }
    }
  }

  /**
   * Starts the command again on a port this fixture had (after a kill: a restart on the same port and directory,
   * so it loads what it persisted) and waits until the port answers as the new process.
   */
  void restart(int port, List<String> command) {
    Process p = launch(port, command);
    if (!answersAsItself(port, p)) {
      throw new IllegalStateException("redis-server on port " + port + " exited with " + p.exitValue()
          + " on its restart; its log ends:\n" + tail(port));
    }
    byPort.put(port, p);
  }

  private Process launch(int port, List<String> command) {
    try {
      return new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
          .redirectOutput(log(port).toFile()).start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not run " + command.get(0) + " (is Redis installed?)", e);
    }
  }

  /** True once the port reports the process's own pid; false if the process exits first. */
  private boolean answersAsItself(int port, Process p) {
    String pid = "process_id:" + p.pid();
    try {
      Eventually.until(READY, POLL, "redis-server pid " + p.pid() + " to answer on port " + port, () -> {
        String info = RedisCli.tryRun(port, "INFO", "server");
        return !p.isAlive() || info != null && info.contains(pid);
      }, done -> done);
    } catch (AssertionError e) {
      p.destroyForcibly();
      throw new AssertionError(e.getMessage() + "; its log ends:\n" + tail(port), e);
    }
    return p.isAlive();
  }

  List<Integer> ports() {
    return List.copyOf(ports);
  }

  boolean alive(int port) {
    return process(port).isAlive();
  }

  List<Integer> livePorts() {
    return ports.stream().filter(this::alive).toList();
  }

  long pid(int port) {
    return process(port).pid();
  }

  private Process process(int port) {
    Process p = byPort.get(port);
    if (p == null) {
      throw new IllegalArgumentException("no server of this fixture on port " + port + "; its ports: " + ports);
    }
    return p;
  }

  /** SIGKILL, as a crash: the server gets no chance to tell anyone. */
  void kill(int port) {
    Process p = process(port);
    p.destroyForcibly();
    try {
      if (!p.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("redis-server pid " + p.pid() + " runs " + STOP_GRACE + " after a SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while killing port " + port, e);
    }
  }

  /** Waits (bounded) until the probe finds nothing missing; it answers what is still missing, or null. */
  static void await(Duration bound, String what, Supplier<String> missing) {
    Eventually.until(bound, POLL, what, missing, Objects::isNull);
  }

  private Path log(int port) {
    return dir.resolve("redis-" + port + ".log");
  }

  private String tail(int port) {
    try (Stream<String> lines = Files.lines(log(port))) {
      List<String> all = lines.toList();
      return String.join("\n", all.subList(Math.max(0, all.size() - 20), all.size()));
    } catch (IOException | UncheckedIOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is shutting down and the hook runs anyway
    }
    stopAndDelete();
  }

  /** SIGTERM to all, a short bounded wait, then SIGKILL for any still there; then the temp dir goes. */
  private synchronized void stopAndDelete() {
    byPort.values().forEach(Process::destroy);
    long deadline = System.nanoTime() + STOP_GRACE.toNanos();
    for (Process p : byPort.values()) {
      try {
        if (!p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
          p.destroyForcibly().waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder()).forEach(RedisProcesses::deleteQuietly);
    } catch (IOException | UncheckedIOException e) {
      // already gone; a leftover temp dir harms nobody
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      // the temp dir's cleanup is best effort
    }
  }
}
