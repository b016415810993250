package io.conveyor.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** redis-cli runs for the Redis fixtures, each bounded: a reply within the bound, or an exception naming the run. */
final class RedisCli {
  static final String PATH = "/usr/bin/redis-cli";
  private static final Duration BOUND = Duration.ofSeconds(10);

  private RedisCli() {
  }

  /**
   * redis-cli against one port; its output, trimmed (an error reply is output too: redis-cli exits 0 on one).
   * Lines on stdin, when given, all go over one connection. Throws when the port cannot be reached.
   */
  static String run(int port, String stdin, String... args) {
    List<String> command = new ArrayList<>(List.of(PATH, "-h", "127.0.0.1", "-p", Integer.toString(port)));
    command.addAll(List.of(args));
    return run(command, stdin, BOUND);
  }

  /** The same, or null when the port does not answer (for waits, where a node down is a state to wait out). */
  static String tryRun(int port, String... args) {
    try {
      return run(port, null, args);
    } catch (IllegalStateException e) {
      return null;
    }
  }

  /** Runs a command to its end (bounded), its output kept in a file so no pipe can fill and stall it. */
  static String run(List<String> command, String stdin, Duration bound) {
    Path out = null;
    try {
      out = Files.createTempFile("redis-cli-", ".out");
      Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
      try (var in = p.getOutputStream()) {
        if (stdin != null) {
          in.write((stdin + "\n").getBytes(StandardCharsets.UTF_8));
        }
      }
      if (!p.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " did not end within " + bound);
      }
      String text = Files.readString(out).strip();
      if (p.exitValue() != 0) {
        throw new IllegalStateException(String.join(" ", command) + " failed: " + text);
      }
      return text;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted running " + command, e);
    } finally {
      try {
        if (out != null) {
          Files.deleteIfExists(out);
        }
      } catch (IOException e) {
        // a leftover temp file harms nobody
      }
    }
  }
}
