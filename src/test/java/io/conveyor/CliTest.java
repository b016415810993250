package io.conveyor;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
        .pipeline("paid", "{'name':'paid','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/await','params':{'event':'payment.settled','key':'${input.orderId}'}}]}")
        .pipeline("later", "{'name':'later','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/delay','params':{'duration':'2h'}},{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .schedule("nightly", "{'pipeline':'order','owner':'acme','cron':'30 3 * * *','timeZone':'Europe/Paris'}")
        .schedule("yearly", "{'pipeline':'order','owner':'acme','cron':'0 4 1 1 *','timeZone':'UTC',"
            + "'input':{'report':'annual'}}")
        .start(steps.registry());
  }

  @AfterAll
  static void stopNode() {
    node.close();
  }

  private static CliRun cli(String... args) {
    return run(Cli.PROGRESS_EVERY, args);
  }

  /** A run whose long walks say how far they got at every step (on stderr). */
  private static CliRun chatty(String... args) {
    return run(Duration.ZERO, args);
  }

  private static CliRun run(Duration progressEvery, String... args) {
    return CliRun.of(node.config(), progressEvery, args);
  }

  @Test
  void start_status_and_list_find_transactions_and_print_json_or_lines() {
    CliRun started = cli("start", "order", "{\"n\":1}", "--owner", "acme", "--external-id", "cli-1", "--wait", "--json");
    assertEquals(0, started.code(), started.err());
    String txId = started.json().getString("txId");
    assertEquals("success", started.json().getString("status"));
    CliRun status = cli("status", txId, "--json");
    assertEquals(new JsonObject().put("ok", true), status.json().getJsonObject("output"));
    CliRun readable = cli("status", txId);
    assertTrue(readable.out().startsWith(txId + "  order  success"), readable.out());
    assertEquals(1, cli("status", txId, "--owner", "globex").code(), "another owner's is not found");

    String failed = cli("start", "refund", "--owner", "acme", "--wait", "--json").json().getString("txId");
    List<JsonObject> found = cli("list", "--status", "failed", "--pipeline", "refund", "--json").lines();
    assertEquals(List.of(failed), found.stream().map(j -> j.getString("txId")).toList());
    List<JsonObject> byExt = cli("search", "--external-id", "cli-1", "--owner", "acme", "--all", "--json").lines();
    assertEquals(txId, byExt.get(0).getString("txId"));
    assertTrue(cli("list", "--q", "nothing-like-this").out().contains("no transaction matches"));
    CliRun paged = cli("list", "--owner", "acme", "--limit", "1");
    assertTrue(paged.out().contains("more: --cursor "), paged.out());
    assertEquals(2, cli("list", "--status", "done").code(), "an unknown status is bad usage");
  }

  @Test
  void cancel_retry_switch_and_wake_act_on_any_owners_transaction() {
    String gated = node.transactions.start(new JsonObject().put("type", "gate").put("owner", "acme")).await().txId();
    Eventually.until(Duration.ofSeconds(30), "the gate to wait", () -> node.store.reads.getState(gated).await()
        .processingState(), "sleeping"::equals);
    CliRun switched = cli("switch", gated, "go", "true", "--json");
    assertEquals(0, switched.code(), switched.err());
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(gated).status());

    String sleeper = node.transactions.start(new JsonObject().put("type", "later").put("owner", "acme")).await()
        .txId();
    Eventually.until(Duration.ofSeconds(30), "the sleeper to sleep", () -> node.store.reads.getState(sleeper).await()
        .processingState(), "sleeping"::equals);
    CliRun woken = cli("wake", sleeper);
    assertEquals(0, woken.code(), woken.err());
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(sleeper).status(), "woken, it ran its last step");
    assertEquals(1, cli("wake", sleeper).code(), "an ended one cannot be woken");

    String another = node.transactions.start(new JsonObject().put("type", "later").put("owner", "bolt")).await()
        .txId();
    Eventually.until(Duration.ofSeconds(30), "it sleeps", () -> node.store.reads.getState(another).await()
        .processingState(), "sleeping"::equals);
    CliRun cancelled = cli("cancel", another, "--json");
    assertEquals("cancelled", cancelled.json().getString("status"));
    CliRun retried = cli("retry", another, "--from-start", "--json");
    assertEquals(0, retried.code(), retried.err());
    assertEquals("running", retried.json().getString("status"));
    assertEquals(1, cli("cancel", "tx-00000000000000000000000000000000").code(), "no such transaction");
  }

  @Test
  void pause_and_resume_act_on_any_owners_transaction_and_a_resume_of_one_not_paused_is_refused() {
    String sleeper = node.transactions.start(new JsonObject().put("type", "later").put("owner", "bolt")).await()
        .txId();
    Eventually.until(Duration.ofSeconds(30), "it sleeps", () -> node.store.reads.getState(sleeper).await()
        .processingState(), "sleeping"::equals);
    CliRun paused = cli("pause", sleeper, "--reason", "fix step 2", "--json");
    assertEquals(0, paused.code(), paused.err());
    assertEquals("cli", paused.json().getJsonObject("paused").getString("by"));
    assertEquals("fix step 2", paused.json().getJsonObject("paused").getString("reason"));
    assertTrue(cli("status", sleeper).out().contains("paused since"), "the readable line says it is paused");
    CliRun resumed = cli("resume", sleeper, "--timers", "skip", "--json");
    assertEquals(0, resumed.code(), resumed.err());
    assertFalse(resumed.json().containsKey("paused"));
    CliRun again = cli("resume", sleeper);
    assertEquals(1, again.code(), "not paused: refused");
    assertTrue(again.err().contains("is not paused"), again.err());
    assertEquals(2, cli("resume", sleeper, "--timers", "later").code(), "a bad --timers is bad usage");
  }

  @Test
  void pipeline_rollout_shows_rolls_back_and_refuses_what_cannot_be() {
    String stable = "{'name':'canaried','nodeGroup':'master','transactionType':true,'steps':["
        + "{'type':'util/fixed-reply','params':{'reply':{'v':1}}}]}";
    String canary = stable.replace("'v':1", "'v':2").replace("}]}", "}],'rollout':{'share':20}}");
    long now = System.currentTimeMillis();
    for (String json : List.of(stable, canary)) {
      node.node().catalog().publish(node.store.pipelines, node.node().catalog().parser()
          .parse(new JsonObject(json.replace('\'', '"')), "test"), now++).await();
    }
    JsonObject shown = cli("pipeline", "rollout", "canaried", "show", "--json").json();
    assertEquals("canary", shown.getString("state"));
    assertEquals(20, shown.getInteger("share"));
    assertTrue(cli("pipeline", "rollout", "canaried", "show").out().contains("canary  starts run "
        + shown.getString("version") + " (20 %), stable " + shown.getString("stable") + " (80 %)"));
    CliRun back = cli("pipeline", "rollout", "canaried", "rollback", "--json");
    assertEquals(0, back.code(), back.err());
    assertEquals(shown.getString("stable"), back.json().getString("version"));
    assertEquals("rolledback", back.json().getString("state"));
    CliRun again = cli("pipeline", "rollout", "canaried", "promote");
    assertEquals(1, again.code());
    assertTrue(again.err().contains("no rollout under way (its last one was rolledback)"), again.err());
    assertEquals(1, cli("pipeline", "rollout", "nope", "show").code(), "no such pipeline: refused");
    assertEquals(2, cli("pipeline", "rollout", "canaried", "undo").code(), "an unknown action is bad usage");
  }

  @Test
  void group_schedule_and_owner_commands_change_what_the_node_sees() {
    assertEquals("paused", cli("group", "pause", "master", "--json").json().getString("state"));
    assertEquals("paused", node.transactions.group("master", "read", "t").await().state());
    CliRun drained = cli("group", "drain", "master", "--wait", "--json");
    assertEquals(0, drained.code(), drained.err());
    assertTrue(drained.json().getBoolean("drained"), drained.out());
    assertTrue(cli("group", "resume", "master").out().startsWith("master  running"));
    CliRun typo = cli("group", "pause", "mastr");
    assertEquals(1, typo.code());
    assertTrue(typo.err().contains("no node group mastr"), typo.err());

    List<JsonObject> schedules = cli("schedule", "list", "--json").lines();
    assertTrue(schedules.stream().anyMatch(j -> j.getString("id").equals("nightly")), schedules.toString());
    assertEquals(true, cli("schedule", "pause", "nightly", "--json").json().getBoolean("paused"));
    assertEquals("1", cmd("HGET", node.keys.scheduleH("nightly"), "paused").toString());
    CliRun triggered = cli("schedule", "trigger", "nightly", "--json");
    assertTrue(triggered.json().getString("triggered").startsWith("tx-"), triggered.out());
    assertEquals(false, cli("schedule", "resume", "nightly", "--json").json().getBoolean("paused"));

    CliRun set = cli("owner", "set", "acme", "--max-concurrency", "7", "--rate-limit", "30/m", "--json");
    assertEquals(7, set.json().getInteger("maxConcurrency"));
    assertEquals("30/m", node.store.owners.get("acme").await().rateLimit());
    assertEquals("acme", cli("owner", "list", "--json").lines().get(0).getString("owner"));
    assertEquals(2, cli("owner", "set", "acme", "--rate-limit", "fast").code());
    assertEquals(5, cli("owner", "set", "acme", "--max-live", "5", "--json").json().getInteger("maxLive"));
    assertEquals(5, node.store.owners.get("acme").await().maxLive());
    CliRun tab = cli("owner", "set", "ac\tme", "--max-live", "5");
    assertEquals(2, tab.code());
    assertTrue(tab.err().contains("U+0009"), tab.err());
    assertEquals(null, cli("owner", "clear", "acme", "--json").json().getValue("maxConcurrency"));
  }

  @Test
  void tail_prints_events_and_follows_new_ones() {
    String dead = "node-cli-" + Long.toHexString(System.nanoTime());
    cmd("ZADD", node.keys.nodesZ(), 1, dead);
    Eventually.until(Duration.ofSeconds(30), "the reaper to record it", () -> cli("tail", "--kind", "node-dead",
        "--json").lines().stream().anyMatch(e -> dead.equals(e.getString("subject"))), found -> found);
    CliRun followed = cli("tail", "--kind", "node-dead", "--follow", "--for", "1");
    assertEquals(0, followed.code());
    assertTrue(followed.out().contains(dead), followed.out());
  }

  @Test
  void event_send_wakes_the_owners_waiting_step_and_the_same_id_again_records_nothing() {
    String txId = cli("start", "paid", "{\"orderId\":\"o-1\"}", "--owner", "acme", "--json").json().getString("txId");
    Eventually.until(Duration.ofSeconds(30), "the await to sleep", () -> cmd("HGET", node.keys.stateH(txId),
        "processingState").toString(), "sleeping"::equals);
    CliRun sent = cli("event", "send", "payment.settled", "o-1", "{\"amount\":3}", "--owner", "acme", "--id", "psp-1",
        "--json");
    assertEquals(0, sent.code(), sent.err());
    assertEquals("delivered", sent.json().getString("outcome"));
    assertEquals(1, sent.json().getInteger("woken"));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(txId).status());
    CliRun again = cli("event", "send", "payment.settled", "o-1", "{\"amount\":3}", "--owner", "acme", "--id", "psp-1");
    assertTrue(again.out().startsWith("psp-1  delivered (sent before)"), again.out());
    CliRun bad = cli("event", "send", "payment.settled", "o-1", "--deliver", "some");
    assertEquals(2, bad.code());
    assertTrue(bad.err().contains("deliver"), bad.err());
  }

  @Test
  void usage_help_and_exit_codes() {
    CliRun help = cli("help");
    assertEquals(0, help.code());
    for (String command : List.of("start", "status", "list", "cancel", "retry", "pause", "resume", "switch", "wake",
        "event", "tail", "group", "pipeline", "schedule", "owner", "new-key")) {
      assertTrue(help.out().contains("  " + command), command + " in: " + help.out());
    }
    assertTrue(cli("list", "--help").out().contains("conveyor list --status failed"));
    CliRun unknown = cli("status", "tx-1", "--ownr", "acme");
    assertEquals(2, unknown.code());
    assertTrue(unknown.err().contains("did you mean --owner"), unknown.err());
    CliRun typo = cli("lsit");
    assertEquals(2, typo.code());
    assertTrue(typo.err().contains("no command lsit (did you mean list?)"), typo.err());
    CliRun unknownCommand = cli("frobnicate");
    assertEquals(2, unknownCommand.code());
    assertTrue(unknownCommand.err().contains("commands: start, status, list, cancel, retry, pause, resume, switch, wake, event,"
        + " tail, group, pipeline,"
        + " schedule, owner, archive-quarantine, audit, new-key, completion, help"), unknownCommand.err());
    assertTrue(Cli.handles(new String[] {"frobnicate"}), "the jar hands an unknown command to the command line");
    assertFalse(Cli.handles(new String[0]), "no argument starts a node");
    assertFalse(Cli.handles(new String[] {"--config", "conf/config.json"}), "--config alone starts a node");
    CliRun action = cli("group", "paus", "master");
    assertEquals(2, action.code());
    assertTrue(action.err().contains("did you mean pause?"), action.err());
    assertTrue(cli("group").err().contains("commands: "), "a command without its action lists the actions");
    assertEquals(2, cli("cancel").code(), "a missing TXID is bad usage");
    // nothing listens there: Redis is unreachable
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int away = Cli.run(new ArrayList<>(List.of("status", "tx-00000000000000000000000000000000")),
        io.conveyor.config.ConfigLoader.load(null, java.util.Map.of("CONVEYOR_REDIS_URL", "redis://127.0.0.1:"
            + io.conveyor.testing.TestRedis.freePort(), "CONVEYOR_REDIS_EMBEDDED", "never")),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(3, away, err.toString(StandardCharsets.UTF_8));
    CliRun key = cli("new-key", "acme", "client+admin");
    assertEquals(0, key.code());
    assertTrue(key.out().contains("\"roles\":[\"client\",\"admin\"]"), key.out());
  }

  @Test
  void help_names_every_command_and_completion_prints_a_script_for_bash_and_zsh() throws Exception {
    CliRun help = cli("help", "list");
    assertEquals(0, help.code());
    assertTrue(help.out().contains("conveyor search --q 'order-17' --all --json"), help.out());
    assertTrue(cli("tail", "--help").out().contains("node-dead, exception"), "--kind's help lists the kinds");
    for (String shell : List.of("bash", "zsh")) {
      CliRun script = cli("completion", shell);
      assertEquals(0, script.code(), script.err());
      assertTrue(script.out().contains("complete -F _complete_conveyor"), script.out());
      for (String command : List.of("archive-quarantine", "schedule", "new-key", "--external-id", "node-dead")) {
        assertTrue(script.out().contains(command), command + " completes");
      }
    }
    Path script = Files.createTempFile("conveyor-completion", ".bash");
    try {
      Files.writeString(script, cli("completion", "bash").out());
      assertEquals("[node-dead]", complete(script, "tail", "--kind", "node"));
      assertEquals("[drain pause resume status]", complete(script, "group", ""));
      assertEquals("[archive-quarantine]", complete(script, "arch"));
    } finally {
      Files.delete(script);
    }
  }

  /** What bash offers for the last word of `conveyor WORDS…` with the script sourced, as [a b c]. */
  private static String complete(Path script, String... words) throws Exception {
    String line = "conveyor " + String.join(" ", words);
    String bash = "source '" + script + "'; COMP_WORDS=(conveyor" + Arrays.stream(words).map(w -> " '" + w + "'")
        .collect(java.util.stream.Collectors.joining()) + "); COMP_CWORD=" + words.length + "; COMP_LINE='" + line
        + "'; COMP_POINT=${#COMP_LINE}; _complete_conveyor; echo \"[${COMPREPLY[*]}]\"";
    Process p = new ProcessBuilder("bash", "-c", bash).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS), "bash did not finish");
    return out;
  }

  @Test
  void schedule_list_shows_the_next_fire_time_and_show_prints_the_whole_schedule() {
    String line = cli("schedule", "list").out().lines().filter(l -> l.startsWith("yearly")).findFirst().orElseThrow();
    assertTrue(line.matches("yearly  order  next \\d{4}-01-01T04:00:00Z"), line);
    CliRun shown = cli("schedule", "show", "yearly");
    assertEquals(0, shown.code(), shown.err());
    List<String> lines = shown.out().lines().toList();
    assertTrue(lines.get(0).matches("yearly  active  next \\d{4}-01-01T04:00:00Z"), shown.out());
    for (String field : List.of("pipeline +order", "cron +0 4 1 1 \\*", "timeZone +UTC", "owner +acme",
        "input +\\{\"report\":\"annual\"}", "runs +fires 0, misses 0, skipped overlaps 0")) {
      assertTrue(lines.stream().anyMatch(l -> l.matches("  " + field)), field + " in:\n" + shown.out());
    }
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("  next") && l.split(", ").length == 5), shown.out());
    assertEquals(1, cli("schedule", "show", "yearlly").code(), "no such schedule");
  }

  @Test
  void group_drain_wait_prints_one_line_where_the_wait_ended() {
    try {
      CliRun drained = cli("group", "drain", "master", "--wait");
      assertEquals(0, drained.code(), drained.err());
      assertEquals(List.of("master  draining  in flight 0  queued 0  drained"), drained.out().lines().toList());
    } finally {
      cli("group", "resume", "master");
    }
  }

  @Test
  void tail_refuses_an_unknown_kind_naming_the_kinds_and_the_nearest() {
    CliRun typo = cli("tail", "--kind", "nodedead");
    assertEquals(2, typo.code());
    assertTrue(typo.err().contains("no event kind nodedead (did you mean node-dead?)"), typo.err());
    assertTrue(typo.err().contains("kinds: node-dead, exception, schedule-paused"), typo.err());
    assertEquals("", typo.out());
    CliRun followed = chatty("tail", "--kind", "redis-memory-high", "--follow", "--for", "1");
    assertEquals(0, followed.code(), followed.err());
    assertTrue(followed.err().contains("tail: following since "), "progress on stderr: " + followed.err());
    assertFalse(followed.out().contains("following"), "stdout holds events only");
  }

  @Test
  void list_all_says_how_far_it_got_on_stderr_and_keeps_stdout_parseable() {
    String owner = "walk" + Long.toHexString(System.nanoTime());
    for (int i = 0; i < 3; i++) {
      node.awaitFinal(node.transactions.start(new JsonObject().put("type", "order").put("owner", owner)).await()
          .txId());
    }
    CliRun walked = chatty("list", "--owner", owner, "--limit", "1", "--all", "--json");
    assertEquals(0, walked.code(), walked.err());
    assertEquals(3, walked.lines().size(), walked.out());
    assertTrue(walked.err().contains("list: 2 pages, 2 transactions so far"), walked.err());
  }

  @Test
  void a_page_cut_by_the_search_budget_never_says_no_transaction_matches_and_says_where_it_stopped() {
    String owner = "cut" + Long.toHexString(System.nanoTime());
    for (int i = 0; i < 3; i++) {
      node.transactions.start(new JsonObject().put("type", "later").put("owner", owner)).await();
    }
    // every reading of this ticker moves it a whole budget, and a script call looks at one entry: the walk is cut
    // after its first round, before it has looked at the owner's three (none of which is an order)
    long budget = node.config().http().searchBudget().toNanos();
    java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
    CliRun cut = CliRun.of(node.config(), () -> nanos.addAndGet(budget), 1, "list", "--owner", owner,
        "--pipeline", "order");
    assertEquals(0, cut.code(), cut.err());
    assertFalse(cut.out().contains("no transaction matches"), cut.out());
    assertTrue(cut.out().contains("none on this page, but the search has not looked at everything"), cut.out());
    assertTrue(cut.out().contains("more: --cursor "), cut.out());
    assertTrue(cut.out().contains("(the search stopped after its time budget, "
        + node.config().http().searchBudget().toMillis() + " ms, having looked down to created 20"), cut.out());
    // the same search left to its budget looks at everything, and then says that nothing matches
    CliRun whole = cli("list", "--owner", owner, "--pipeline", "order");
    assertEquals(0, whole.code(), whole.err());
    assertEquals("no transaction matches", whole.out().strip(), whole.out());
  }
}
