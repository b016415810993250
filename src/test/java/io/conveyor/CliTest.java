package io.conveyor;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every CLI command against a real node: the CLI works on the node's Redis and archive (its config), prints
 * readable lines or, with --json, JSON, and answers exit codes a script can test.
 */
class CliTest {
  private static TestNode node;
  private static final TestSteps steps = new TestSteps();

  @BeforeAll
  static void startNode() {
    node = new TestNode().set("NODE_IDLE_WAIT", "200ms").set("REAPER_INTERVAL", "200ms")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .pipeline("refund", "{'name':'refund','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fail','params':{'note':'no money'}}]}")
        .pipeline("gate", "{'name':'gate','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/wait','params':{'switch':'go'}},{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .pipeline("later", "{'name':'later','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/delay','params':{'duration':'2h'}},{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .schedule("nightly", "{'pipeline':'order','owner':'acme','cron':'30 3 * * *','timeZone':'Europe/Paris'}")
        .start(steps.registry());
  }

  @AfterAll
  static void stopNode() {
    node.close();
  }

  /** What one run printed and answered. */
  private record Ran(int code, String out, String err) {
    JsonObject json() {
      return new JsonObject(out.strip());
    }

    List<JsonObject> lines() {
      return out.lines().filter(l -> !l.isBlank()).map(JsonObject::new).toList();
    }
  }

  private static Ran cli(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = Cli.run(new ArrayList<>(Arrays.asList(args)), node.config(),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Ran(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void start_status_and_list_find_transactions_and_print_json_or_lines() {
    Ran started = cli("start", "order", "{\"n\":1}", "--owner", "acme", "--external-id", "cli-1", "--wait", "--json");
    assertEquals(0, started.code(), started.err());
    String txId = started.json().getString("txId");
    assertEquals("success", started.json().getString("status"));
    Ran status = cli("status", txId, "--json");
    assertEquals(new JsonObject().put("ok", true), status.json().getJsonObject("output"));
    Ran readable = cli("status", txId);
    assertTrue(readable.out().startsWith(txId + "  order  success"), readable.out());
    assertEquals(1, cli("status", txId, "--owner", "globex").code(), "another owner's is not found");

    String failed = cli("start", "refund", "--owner", "acme", "--wait", "--json").json().getString("txId");
    List<JsonObject> found = cli("list", "--status", "failed", "--pipeline", "refund", "--json").lines();
    assertEquals(List.of(failed), found.stream().map(j -> j.getString("txId")).toList());
    List<JsonObject> byExt = cli("search", "--external-id", "cli-1", "--owner", "acme", "--all", "--json").lines();
    assertEquals(txId, byExt.get(0).getString("txId"));
    assertTrue(cli("list", "--q", "nothing-like-this").out().contains("no transaction matches"));
    Ran paged = cli("list", "--owner", "acme", "--limit", "1");
    assertTrue(paged.out().contains("more: --cursor "), paged.out());
    assertEquals(2, cli("list", "--status", "done").code(), "an unknown status is bad usage");
  }

  @Test
  void cancel_retry_switch_and_wake_act_on_any_owners_transaction() {
    String gated = node.transactions.start(new JsonObject().put("type", "gate").put("owner", "acme")).await().txId();
    Eventually.until(Duration.ofSeconds(10), "the gate to wait", () -> node.store.reads.getState(gated).await()
        .processingState(), "sleeping"::equals);
    Ran switched = cli("switch", gated, "go", "true", "--json");
    assertEquals(0, switched.code(), switched.err());
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(gated).status());

    String sleeper = node.transactions.start(new JsonObject().put("type", "later").put("owner", "acme")).await()
        .txId();
    Eventually.until(Duration.ofSeconds(10), "the sleeper to sleep", () -> node.store.reads.getState(sleeper).await()
        .processingState(), "sleeping"::equals);
    Ran woken = cli("wake", sleeper);
    assertEquals(0, woken.code(), woken.err());
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(sleeper).status(), "woken, it ran its last step");
    assertEquals(1, cli("wake", sleeper).code(), "an ended one cannot be woken");

    String another = node.transactions.start(new JsonObject().put("type", "later").put("owner", "bolt")).await()
        .txId();
    Eventually.until(Duration.ofSeconds(10), "it sleeps", () -> node.store.reads.getState(another).await()
        .processingState(), "sleeping"::equals);
    Ran cancelled = cli("cancel", another, "--json");
    assertEquals("cancelled", cancelled.json().getString("status"));
    Ran retried = cli("retry", another, "--from-start", "--json");
    assertEquals(0, retried.code(), retried.err());
    assertEquals("running", retried.json().getString("status"));
    assertEquals(1, cli("cancel", "tx-00000000000000000000000000000000").code(), "no such transaction");
  }

  @Test
  void group_schedule_and_owner_commands_change_what_the_node_sees() {
    assertEquals("paused", cli("group", "pause", "master", "--json").json().getString("state"));
    assertEquals("paused", node.transactions.group("master", "read", "t").await().state());
    Ran drained = cli("group", "drain", "master", "--wait", "--json");
    assertEquals(0, drained.code(), drained.err());
    assertTrue(drained.lines().get(1).getBoolean("drained"));
    assertTrue(cli("group", "resume", "master").out().startsWith("master  running"));
    Ran typo = cli("group", "pause", "mastr");
    assertEquals(1, typo.code());
    assertTrue(typo.err().contains("no node group mastr"), typo.err());

    List<JsonObject> schedules = cli("schedule", "list", "--json").lines();
    assertEquals("nightly", schedules.get(0).getString("id"));
    assertEquals(true, cli("schedule", "pause", "nightly", "--json").json().getBoolean("paused"));
    assertEquals("1", cmd("HGET", node.keys.scheduleH("nightly"), "paused").toString());
    Ran triggered = cli("schedule", "trigger", "nightly", "--json");
    assertTrue(triggered.json().getString("triggered").startsWith("tx-"), triggered.out());
    assertEquals(false, cli("schedule", "resume", "nightly", "--json").json().getBoolean("paused"));

    Ran set = cli("owner", "set", "acme", "--max-concurrency", "7", "--rate-limit", "30/m", "--json");
    assertEquals(7, set.json().getInteger("maxConcurrency"));
    assertEquals("30/m", node.store.owners.get("acme").await().rateLimit());
    assertEquals("acme", cli("owner", "list", "--json").lines().get(0).getString("owner"));
    assertEquals(2, cli("owner", "set", "acme", "--rate-limit", "fast").code());
    assertEquals(5, cli("owner", "set", "acme", "--max-live", "5", "--json").json().getInteger("maxLive"));
    assertEquals(5, node.store.owners.get("acme").await().maxLive());
    Ran tab = cli("owner", "set", "ac\tme", "--max-live", "5");
    assertEquals(2, tab.code());
    assertTrue(tab.err().contains("U+0009"), tab.err());
    assertEquals(null, cli("owner", "clear", "acme", "--json").json().getValue("maxConcurrency"));
  }

  @Test
  void tail_prints_events_and_follows_new_ones() {
    String dead = "node-cli-" + Long.toHexString(System.nanoTime());
    cmd("ZADD", node.keys.nodesZ(), 1, dead);
    Eventually.until(Duration.ofSeconds(10), "the reaper to record it", () -> cli("tail", "--kind", "node-dead",
        "--json").lines().stream().anyMatch(e -> dead.equals(e.getString("subject"))), found -> found);
    Ran followed = cli("tail", "--kind", "node-dead", "--follow", "--for", "1");
    assertEquals(0, followed.code());
    assertTrue(followed.out().contains(dead), followed.out());
  }

  @Test
  void usage_help_and_exit_codes() {
    Ran help = cli("help");
    assertEquals(0, help.code());
    for (String command : List.of("start", "status", "list", "cancel", "retry", "switch", "wake", "tail", "group",
        "schedule", "owner", "new-key")) {
      assertTrue(help.out().contains("  " + command), command + " in: " + help.out());
    }
    assertTrue(cli("list", "--help").out().contains("conveyor list --status failed"));
    Ran unknown = cli("status", "tx-1", "--ownr", "acme");
    assertEquals(2, unknown.code());
    assertTrue(unknown.err().contains("did you mean --owner"), unknown.err());
    assertEquals(2, cli("lsit").code());
    assertEquals(2, cli("cancel").code(), "a missing TXID is bad usage");
    // nothing listens there: Redis is unreachable
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int away = Cli.run(new ArrayList<>(List.of("status", "tx-00000000000000000000000000000000")),
        io.conveyor.config.ConfigLoader.load(null, java.util.Map.of("CONVEYOR_REDIS_URL", "redis://127.0.0.1:"
            + io.conveyor.testing.TestRedis.freePort(), "CONVEYOR_REDIS_EMBEDDED", "never")),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(3, away, err.toString(StandardCharsets.UTF_8));
    Ran key = cli("new-key", "acme", "client+admin");
    assertEquals(0, key.code());
    assertTrue(key.out().contains("\"roles\":[\"client\",\"admin\"]"), key.out());
  }
}
