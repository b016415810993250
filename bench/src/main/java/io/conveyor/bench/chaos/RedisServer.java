package io.conveyor.bench.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A private redis-server on a port of its own with AOF on, in a directory of its own: the suite may crash,
 * restart, empty or stop it without touching anyone else's Redis. Queried with redis-cli, bounded in time,
 * so a stopped server makes a probe fail instead of hang.
 */
final class RedisServer {
  private final int port;
  private final Path dir;
  private final List<String> extra;
  private Process process;
  private Runnable undo;

  RedisServer(int port, Path dir) {
    this(port, dir, List.of());
  }

  /** With more redis-server options, e.g. "--appendfsync", "always" (bench/pause: every write on disk before its reply). */
  RedisServer(int port, Path dir, List<String> extra) {
    this.port = port;
    this.dir = dir;
    this.extra = List.copyOf(extra);
  }

  int port() {
    return port;
  }

  String url() {
    return "redis://127.0.0.1:" + port;
  }

  /** Starts it (on the same port and directory every time) and waits until it answers PING. */
  void start() throws IOException {
    Files.createDirectories(dir);
    List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind",
        "127.0.0.1", "--dir", dir.toString(), "--appendonly", "yes", "--save", "", "--logfile",
        dir.resolve("redis.log").toString()));
    cmd.addAll(extra);
    process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("redis.out").toFile()).start();
    undo = Teardown.process(process);
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!ping()) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        throw new IOException("redis-server on port " + port + " did not start; see " + dir.resolve("redis.log"));
      }
      Procs.sleep(50);
    }
  }

  /** A crash: SIGKILL. What AOF has written survives a restart. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
    undo.run();
  }

  /** A clean stop: SHUTDOWN NOSAVE (AOF already holds every write). */
  void shutdown() throws InterruptedException {
    cli("SHUTDOWN", "NOSAVE");
    if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor();
    }
    undo.run();
  }

  /** Deletes the data files (AOF directory and any RDB), for a restart with empty data. */
  void wipe() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      for (Path p : files.filter(f -> f.getFileName().toString().startsWith("appendonly")
          || f.getFileName().toString().endsWith(".rdb")).toList()) {
        try (Stream<Path> tree = Files.walk(p)) {
          for (Path q : tree.sorted(Comparator.reverseOrder()).toList()) {
            Files.delete(q);
          }
        }
      }
    }
  }

  long pid() {
    return process.pid();
  }

  boolean ping() {
    return "PONG".equals(trim(cli("PING")));
  }

  /** A command's reply as redis-cli prints it raw, or null when Redis did not answer within 2 s. */
  String cli(String... args) {
    List<String> cmd = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port), "--raw"));
    cmd.addAll(List.of(args));
    return Procs.run(Duration.ofSeconds(2), cmd);
  }

  /** Several commands, one a line, sent through one redis-cli; its raw output lines, or null. */
  List<String> pipe(List<String> commands) {
    String out = Procs.run(Duration.ofSeconds(5), List.of("redis-cli", "-p", Integer.toString(port), "--raw"),
        String.join("\n", commands) + "\n");
    return out == null ? null : out.lines().toList();
  }

  /** An integer reply, or -1 when Redis did not answer. */
  long integer(String... args) {
    String s = trim(cli(args));
    try {
      return s == null || s.isEmpty() ? -1 : Long.parseLong(s);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** A string reply; "" for nil, null when Redis did not answer. */
  String string(String... args) {
    return trim(cli(args));
  }

  private static String trim(String s) {
    return s == null ? null : s.strip();
  }
}
