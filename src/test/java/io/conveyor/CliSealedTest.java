package io.conveyor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The command line seals what it starts for an encrypted owner and opens what it reads, as a node does. */
class CliSealedTest {
  private static final String MARKER = "MARKER-7700-0000";

  private static JsonObject cli(TestNode node, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = Cli.run(new ArrayList<>(List.of(args)), node.config(), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), Cli.PROGRESS_EVERY);
    assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
    return new JsonObject(out.toString(StandardCharsets.UTF_8).strip());
  }

  @Test
  void a_transaction_started_from_the_command_line_for_an_encrypted_owner_is_sealed_in_redis_and_reads_in_clear() {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    try (TestNode node = new TestNode().set("SECURITY_ENCRYPTION_OWNERS", "acme")
        .set("SECURITY_ENCRYPTION_MASTER_KEY", "base64:" + Base64.getEncoder().encodeToString(key))
        .set("ARCHIVE_DELAY", "1h")
        .pipeline("echo", "{'name':'echo','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/record'}]}")
        .start(new TestSteps().registry())) {
      JsonObject started = cli(node, "start", "echo", "{\"card\":\"" + MARKER + "\"}", "--owner", "acme", "--wait",
          "--json");
      String txId = started.getString("txId");
      assertEquals(MARKER, started.getJsonObject("output").getString("card"), started.encode());
      String input = TestRedis.cmd("HGET", node.keys.stateH(txId), "input").toString();
      assertFalse(input.contains(MARKER), input);
      assertTrue(input.contains("sealed:v1:"), input);
      assertEquals(MARKER, cli(node, "status", txId, "--owner", "acme", "--json").getJsonObject("output")
          .getString("card"));
    }
  }
}
