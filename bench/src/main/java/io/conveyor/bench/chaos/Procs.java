package io.conveyor.bench.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Small external commands (kill, ss, redis-cli, psql), each bounded in time. */
final class Procs {
  private Procs() {
  }

  /** The command's stdout, or null when it failed, exited non-zero or ran past the bound (then it is killed). */
  static String run(Duration bound, List<String> command) {
    return run(bound, command, "");
  }

  /** The same, with text on the command's stdin. */
  static String run(Duration bound, List<String> command, String input) {
    try {
      Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
      try (var in = p.getOutputStream()) {
        in.write(input.getBytes(StandardCharsets.UTF_8));
      }
      CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> {
        try {
          return p.getInputStream().readAllBytes();
        } catch (IOException e) {
          return new byte[0];
        }
      });
      if (!p.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        return null;
      }
      return p.exitValue() == 0 ? new String(out.get(), StandardCharsets.UTF_8) : null;
    } catch (IOException | java.util.concurrent.ExecutionException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** kill -NAME pid; false if the process is gone. */
  static boolean signal(long pid, String name) {
    return run(Duration.ofSeconds(5), List.of("kill", "-" + name, Long.toString(pid))) != null;
  }

  /** The command as root would run it as another user (initdb and postgres refuse to run as root). */
  static List<String> as(String user, List<String> command) {
    if (!"root".equals(System.getProperty("user.name"))) {
      return command;
    }
    List<String> out = new java.util.ArrayList<>(List.of("runuser", "-u", user, "--"));
    out.addAll(command);
    return out;
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
