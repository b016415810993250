package io.conveyor.it;

import io.conveyor.ClientRoot;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.domain.Transactions;
import io.conveyor.config.ConfigLoader;
import io.conveyor.model.TxStatus;
import io.conveyor.model.TxSummary;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.NodeProcess;
import io.conveyor.testing.TestRedis;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The fat jar with the shipped config: starts, runs the example pipeline end to end, stops on SIGTERM. */
class FatJarIT {

  private static TxSummary runExample(String redisUrl, String prefix) {
    Vertx vertx = Vertx.vertx();
    try {
      Transactions tx = ClientRoot.transactions(vertx, ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_URL", redisUrl,
          "CONVEYOR_REDIS_PREFIX", prefix)));
      String txId = tx.start(new JsonObject().put("type", "example").put("owner", "it")
          .put("input", new JsonObject().put("name", "first"))).await().txId();
      return Eventually.until(Duration.ofSeconds(30), "the example transaction to finish",
          () -> tx.status(txId, "it").await(), s -> s.status().isFinal());
    } finally {
      vertx.close().await();
    }
  }

  private static Map<String, String> env(String redisUrl, String prefix) {
    // the node and the test's client share an archive file of this test's own (as a node and the shell do)
    return Map.of("CONVEYOR_REDIS_URL", redisUrl, "CONVEYOR_REDIS_PREFIX", prefix,
        "CONVEYOR_CLUSTER_NAME", "it-" + prefix.replace(":", ""),
        "CONVEYOR_HTTP_PORT", Integer.toString(TestRedis.freePort()),
        "CONVEYOR_ARCHIVE_URL", "h2:target/it-archives/" + prefix.replace(":", "") + "/archive");
  }

  @Test
  void the_jar_runs_the_example_on_the_local_redis_and_stops_cleanly_on_sigterm() throws Exception {
    String prefix = TestRedis.newPrefix();
    try (NodeProcess node = NodeProcess.start("fatjar-local", env(TestRedis.url(), prefix))) {
      node.awaitLine(" started: group master", Duration.ofSeconds(90));
      TxSummary done = runExample(TestRedis.url(), prefix);
      assertEquals(TxStatus.SUCCESS, done.status());
      assertEquals(new JsonObject().put("done", true), done.output());
      assertCliRunsTheExample(env(TestRedis.url(), prefix));
      int exit = node.terminate(Duration.ofSeconds(60));
      assertTrue(exit == 0 || exit == 143, "exit code " + exit);
      node.awaitLine(" stopped", Duration.ofSeconds(1));
      assertFalse(node.lines().stream().anyMatch(l -> l.contains("EMBEDDED")), "used an embedded Redis");
    } finally {
      TestRedis.drop(prefix);
    }
  }

  /** The README's way to try a node: the jar's own client starts the example and waits for its summary. */
  private static void assertCliRunsTheExample(Map<String, String> env) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-jar", "target/conveyor.jar", "start", "example", "{\"name\":\"cli\"}", "--wait", "--json");
    pb.environment().putAll(env);
    Path err = Files.createTempFile("conveyor-cli", ".err");
    Process p = pb.redirectError(err.toFile()).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the client did not finish");
    assertEquals(0, p.exitValue(), out + Files.readString(err));
    // stdout is the command's JSON alone: whatever is logged on the way goes to stderr
    for (String line : out.lines().filter(l -> !l.isBlank()).toList()) {
      assertTrue(line.startsWith("{"), "a line of --json output that is not JSON: " + line);
    }
    Files.deleteIfExists(err);
    // a command whose store logs what it did (Migrations logs each migration at INFO) prints its JSON alone too
    ProcessBuilder migrate = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-jar", "target/conveyor.jar", "--json", "pipeline", "migrate", "example");
    migrate.environment().putAll(env);
    Process m = migrate.redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String dry = new String(m.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertTrue(m.waitFor(60, TimeUnit.SECONDS), "the migrate command did not finish");
    assertTrue(new JsonObject(dry).getBoolean("dryRun"), dry);
    String summary = out.lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow();
    JsonObject s = new JsonObject(summary);
    assertEquals("success", s.getString("status"), out);
    assertEquals(new JsonObject().put("done", true), s.getJsonObject("output"));
  }

  @Test
  void with_no_redis_at_the_url_the_jar_starts_an_embedded_one_says_so_and_stops_it() throws Exception {
    int port = TestRedis.freePort();
    String url = "redis://127.0.0.1:" + port;
    try (NodeProcess node = NodeProcess.start("fatjar-embedded", env(url, "conveyor:"))) {
      String warning = node.awaitLine("EMBEDDED Redis", Duration.ofSeconds(90));
      assertTrue(warning.contains("NOT durable"), warning);
      node.awaitLine(" started: group master", Duration.ofSeconds(90));
      assertEquals(TxStatus.SUCCESS, runExample(url, "conveyor:").status());
      int exit = node.terminate(Duration.ofSeconds(60));
      assertTrue(exit == 0 || exit == 143, "exit code " + exit);
      assertFalse(TestRedis.answers(port), "the embedded Redis outlived its node");
    }
  }

  /** The jar is the operator's command line too: help, completion and an unknown command need no Redis. */
  @Test
  void the_jar_answers_help_completion_and_an_unknown_command_from_picocli_inside_it() throws Exception {
    String[] help = jar("help");
    assertEquals("0", help[0], help[1]);
    assertTrue(help[1].contains("archive-quarantine") && help[1].contains("Exit codes:"), help[1]);
    String[] completion = jar("completion", "bash");
    assertEquals("0", completion[0], completion[1]);
    assertTrue(completion[1].contains("complete -F _complete_conveyor"), completion[1]);
    String[] unknown = jar("frobnicate");
    assertEquals("2", unknown[0], unknown[1]);
    assertTrue(unknown[1].contains("no command frobnicate; commands: start, status, list"), unknown[1]);
  }

  /** The jar run with these arguments: its exit code and what it printed (stdout and stderr). */
  private static String[] jar(String... args) throws Exception {
    java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", "target/conveyor.jar"));
    command.addAll(java.util.List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the jar did not finish");
    return new String[] {Integer.toString(p.exitValue()), out};
  }
}
