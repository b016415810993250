package io.conveyor;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** conveyor pipeline migrate: a dry run unless --apply, the counts as lines or JSON, bad input exits 2. */
class CliMigrateTest {
  private static final String V1 = "{'name':'later','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'util/delay','params':{'duration':'2h'}},{'type':'util/fixed-reply','params':{'reply':{'v':1}}}]}";
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private TestNode node;

  @AfterEach
  void stop() {
    node.close();
  }

  private CliRun cli(String... args) {
    return CliRun.of(node.config(), args);
  }

  @Test
  void a_dry_run_counts_apply_moves_and_a_malformed_step_map_exits_2() throws Exception {
    int port = TestRedis.freePort();
    node = new TestNode().clock(clock).set("REAPER_INTERVAL", "20ms").set("HTTP_PORT", Integer.toString(port))
        .set("API_KEYS", "ops:admin:k-ops").pipeline("later", V1).start(new TestSteps().registry());
    String txId = node.start("later", new JsonObject());
    Eventually.until(Duration.ofSeconds(10), "asleep", () -> String.valueOf(cmd("HGET", node.keys.stateH(txId),
        "processingState")), "sleeping"::equals);
    clock.advance(Duration.ofSeconds(10));
    HttpResponse<String> put = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + port + "/api/v1/pipelines/later")).header("Authorization", "Bearer k-ops")
        .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(V1.replace('\'', '"')
            .replace("{\"v\":1}", "{\"v\":2}"))).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, put.statusCode(), put.body());
    String v2 = new JsonObject(put.body()).getString("version");

    CliRun dry = cli("pipeline", "migrate", "later");
    assertEquals(0, dry.code(), dry.err());
    assertTrue(dry.out().contains("dry run") && dry.out().contains("would move 1"), dry.out());
    CliRun applied = cli("pipeline", "migrate", "later", "--to", v2, "--step-map", "1=1", "--apply", "--json");
    assertEquals(0, applied.code(), applied.err());
    assertEquals(1L, new JsonObject(applied.out().strip()).getLong("moved"), applied.out());
    assertEquals(v2, cmd("HGET", node.keys.stateH(txId), "version").toString());
    CliRun bad = cli("pipeline", "migrate", "later", "--step-map", "1");
    assertEquals(2, bad.code(), bad.out());
    assertTrue(bad.err().contains("--step-map"), bad.err());
    CliRun unknown = cli("pipeline", "migrate", "later", "--to", "00ff");
    assertEquals(2, unknown.code());
    assertTrue(unknown.err().contains("to: pipeline later has no version 00ff"), unknown.err());
  }
}
