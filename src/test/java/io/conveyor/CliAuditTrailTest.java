package io.conveyor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.bus.Addresses;
import io.conveyor.config.ApiKeyHash;
import io.conveyor.database.ArchiveStore;
import io.conveyor.database.AuditQuery;
import io.conveyor.model.AuditEntry;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.KeyedApi;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The admin acts that do not come over HTTP are audited too (README, Audit log): every command of the command line
 * that changes shared state, taken from its command tree so that a new one is walked too; an admin key's request on
 * the event bus; and entries made while the archive is down reach its table once it takes writes again.
 */
class CliAuditTrailTest {
  private static final String PIPELINE = "{'name':'pay','nodeGroup':'master','transactionType':true,"
      + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}";
  private static final String UNKNOWN_TX = "tx-0123456789abcdef0123456789abcdef";
  private final AtomicBoolean archiveDown = new AtomicBoolean();
  private TestNode node;

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
  }

  private CliRun cli(io.conveyor.config.Config config, List<String> args) {
    return CliRun.of(config, args.toArray(String[]::new));
  }

  /** An archive whose audit writes fail while archiveDown is set (the rest as the node's own). */
  private ArchiveStore downable(ArchiveStore real) {
    return (ArchiveStore) Proxy.newProxyInstance(ArchiveStore.class.getClassLoader(), new Class<?>[] {ArchiveStore.class},
        (proxy, m, args) -> {
          if (m.getName().equals("appendAudit") && archiveDown.get()) {
            return Future.failedFuture("the archive is down (test)");
          }
          try {
            return m.invoke(real, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  private TestNode start() {
    node = new TestNode().pipeline("pay", PIPELINE).archive(this::downable).start(new TestSteps().registry());
    return node;
  }

  private List<AuditEntry> entries(String keyId) {
    return node.node().archive().audit(new AuditQuery(null, null, keyId, null, null, null, null, null, 1000)).await();
  }

  /** The leaf commands of the command tree, each by its path ("conveyor group pause"). */
  private static List<String> leaves(CommandLine c) {
    if (c.getSubcommands().isEmpty()) {
      return List.of(c.getCommandSpec().qualifiedName(" "));
    }
    List<String> out = new ArrayList<>();
    new TreeSet<>(c.getSubcommands().keySet()).forEach(n -> {
      if (!c.getSubcommands().get(n).getCommandName().equals(n)) {
        return; // an alias (search for list)
      }
      out.addAll(leaves(c.getSubcommands().get(n)));
    });
    return out;
  }

  @Test
  void every_command_that_changes_shared_state_leaves_one_entry_with_who_action_target_and_outcome() {
    start();
    String txId = node.start("pay", new JsonObject());
    // the arguments each act runs with: things that exist, or harmless ones that do not (a refusal is an act too)
    Map<String, List<String>> acts = new LinkedHashMap<>();
    acts.put("conveyor start", List.of("start", "pay", "{\"secret\":1}", "--owner", "acme"));
    acts.put("conveyor cancel", List.of("cancel", UNKNOWN_TX));
    acts.put("conveyor retry", List.of("retry", txId));
    acts.put("conveyor pause", List.of("pause", UNKNOWN_TX, "--reason", "test"));
    acts.put("conveyor resume", List.of("resume", UNKNOWN_TX));
    acts.put("conveyor switch", List.of("switch", UNKNOWN_TX, "approved", "true"));
    acts.put("conveyor wake", List.of("wake", UNKNOWN_TX));
    acts.put("conveyor event send", List.of("event", "send", "paid", "o-1", "{\"amount\":3}", "--owner", "acme"));
    acts.put("conveyor group pause", List.of("group", "pause", "master"));
    acts.put("conveyor group drain", List.of("group", "drain", "master"));
    acts.put("conveyor group resume", List.of("group", "resume", "master"));
    acts.put("conveyor pipeline migrate", List.of("pipeline", "migrate", "pay"));
    acts.put("conveyor pipeline rollout", List.of("pipeline", "rollout", "pay", "rollback"));
    acts.put("conveyor schedule pause", List.of("schedule", "pause", "nosched"));
    acts.put("conveyor schedule resume", List.of("schedule", "resume", "nosched"));
    acts.put("conveyor schedule trigger", List.of("schedule", "trigger", "nosched"));
    acts.put("conveyor owner set", List.of("owner", "set", "acme", "--weight", "2"));
    acts.put("conveyor owner clear", List.of("owner", "clear", "acme"));
    acts.put("conveyor archive-quarantine retry", List.of("archive-quarantine", "retry", UNKNOWN_TX));
    acts.put("conveyor archive-quarantine drop", List.of("archive-quarantine", "drop", UNKNOWN_TX));
    List<String> tree = leaves(Cli.commandLine(new CliSession(System.out, System.err, f -> node.config(),
        Duration.ZERO)));
    List<String> expected = tree.stream().filter(p -> !CliAuditTrail.READS.contains(p)
        && !CliAuditTrail.LOCAL.contains(p)).toList();
    assertTrue(tree.containsAll(CliAuditTrail.READS) && tree.containsAll(CliAuditTrail.LOCAL.stream()
        .filter(p -> !p.equals("conveyor")).toList()), "READS and LOCAL name commands of the tree: " + tree);
    assertEquals(new TreeSet<>(expected), new TreeSet<>(acts.keySet()),
        "each command that is neither a read nor local is an act: give it arguments here (it is audited already)");
    Map<String, Integer> codes = new LinkedHashMap<>();
    acts.forEach((action, args) -> codes.put(action, cli(node.config(), args).code()));
    // reads record nothing (audit.reads is off), nor does a local command
    for (List<String> read : List.of(List.of("status", txId), List.of("owner", "list"), List.of("group", "status",
        "master"), List.of("pipeline", "rollout", "pay", "show"), List.of("new-key", "acme"))) {
      assertEquals(0, cli(node.config(), read).code(), read.toString());
    }
    String who = CliAuditTrail.who();
    List<AuditEntry> all = Eventually.until(Duration.ofSeconds(20), acts.size() + " entries in the archive",
        () -> entries(who), l -> l.size() >= acts.size());
    assertEquals(acts.size(), all.size(), "one entry per act, none for the reads: " + all);
    assertTrue(who.startsWith("cli:" + System.getProperty("user.name") + "@"), who);
    for (AuditEntry e : all) {
      int code = codes.get(e.action());
      assertEquals("cli", e.via(), e.toString());
      assertEquals("cli", e.node(), e.toString());
      assertEquals(code, e.status(), e.toString());
      assertEquals(CliAuditTrail.outcome(code), e.outcome(), e.toString());
      assertEquals(code == 0, e.error() == null, e.toString());
    }
    Map<String, AuditEntry> byAction = new LinkedHashMap<>();
    all.forEach(e -> byAction.put(e.action(), e));
    assertEquals("pay", byAction.get("conveyor start").target(), "the payload is no target");
    assertEquals("acme", byAction.get("conveyor start").owner());
    assertTrue(!byAction.get("conveyor start").toJson().encode().contains("secret"), "no payload value is kept");
    assertEquals("paid/o-1", byAction.get("conveyor event send").target());
    assertEquals("master", byAction.get("conveyor group pause").target());
    assertEquals("ok", byAction.get("conveyor group pause").outcome());
    assertEquals("pay/rollback", byAction.get("conveyor pipeline rollout").target());
    assertEquals("refused", byAction.get("conveyor cancel").outcome());
    assertTrue(byAction.get("conveyor cancel").error().contains(UNKNOWN_TX), byAction.get("conveyor cancel").error());
    assertEquals("2", byAction.get("conveyor owner set").params().getJsonObject("options").getString("--weight"));
  }

  @Test
  void with_audit_reads_the_reads_are_recorded_too_and_a_local_command_still_is_not() {
    node = new TestNode().set("AUDIT_READS", "true").pipeline("pay", PIPELINE).start(new TestSteps().registry());
    for (List<String> args : List.of(List.of("owner", "list"), List.of("pipeline", "rollout", "pay", "show"),
        List.of("new-key", "acme"), List.of("help", "list"))) {
      assertEquals(0, cli(node.config(), args).code(), args.toString());
    }
    List<String> actions = Eventually.until(Duration.ofSeconds(20), "two reads in the archive",
        () -> entries(CliAuditTrail.who()), l -> l.size() >= 2).stream().map(AuditEntry::action).sorted().toList();
    assertEquals(List.of("conveyor owner list", "conveyor pipeline rollout"), actions);
  }

  @Test
  void a_command_that_fails_for_want_of_the_archive_is_recorded_as_failed_in_redis() {
    start();
    String txId = node.start("pay", new JsonObject());
    node.awaitFinal(txId);
    var noArchive = node.sibling().set("ARCHIVE_URL", "postgresql://127.0.0.1:" + TestRedis.freePort() + "/test")
        .config();
    CliRun retry = cli(noArchive, List.of("retry", txId));
    assertEquals(Cli.UNAVAILABLE, retry.code(), retry.err());
    AuditEntry e = Eventually.until(Duration.ofSeconds(20), "the failed retry in the archive",
        () -> entries(CliAuditTrail.who()), l -> !l.isEmpty()).get(0);
    assertEquals("conveyor retry", e.action());
    assertEquals(txId, e.target());
    assertEquals("failed", e.outcome());
    assertEquals(3, e.status());
    assertTrue(e.error() != null && !e.error().isEmpty(), e.toString());
  }

  @Test
  void an_admin_keys_request_on_the_event_bus_is_recorded_and_a_clients_is_not() {
    start();
    String txId = node.start("pay", new JsonObject());
    node.awaitFinal(txId);
    JsonObject body = new JsonObject().put("txId", UNKNOWN_TX).put("owner", "acme");
    var bus = node.node().vertx().eventBus();
    for (String key : List.of(KeyedApi.ADMIN, KeyedApi.CLIENT)) {
      bus.request(Addresses.TX_CANCEL, body, new DeliveryOptions().addHeader("apiKey", key)).otherwiseEmpty().await();
    }
    bus.request(Addresses.TX_STATUS, new JsonObject().put("txId", txId), new DeliveryOptions()
        .addHeader("apiKey", KeyedApi.ADMIN)).otherwiseEmpty().await();
    String adminId = AuditEntry.keyId(ApiKeyHash.of(KeyedApi.ADMIN));
    AuditEntry e = Eventually.until(Duration.ofSeconds(20), "the admin's cancel in the archive",
        () -> entries(adminId), l -> !l.isEmpty()).get(0);
    assertEquals(Addresses.TX_CANCEL, e.action());
    assertEquals(UNKNOWN_TX, e.target());
    assertEquals("bus", e.via());
    assertEquals("ops", e.owner());
    assertEquals("acme", e.params().getString("actedFor"));
    assertEquals("refused", e.outcome());
    assertEquals(404, e.status());
    assertEquals(1, entries(adminId).size(), "the status read is not recorded (audit.reads is off)");
    assertEquals(List.of(), entries(AuditEntry.keyId(ApiKeyHash.of(KeyedApi.CLIENT))), "a client's act is its own");
  }

  @Test
  void entries_made_while_the_archive_is_down_wait_in_redis_and_reach_the_table_afterwards() {
    archiveDown.set(true);
    start();
    for (String weight : List.of("2", "3", "4")) {
      assertEquals(0, cli(node.config(), List.of("owner", "set", "acme", "--weight", weight)).code());
    }
    String auditX = io.conveyor.redis.AdminEvents.auditX(node.keys);
    Eventually.until(Duration.ofSeconds(10), "three entries waiting on auditX", () -> TestRedis.cmd("XLEN", auditX)
        .toLong(), n -> n == 3);
    assertEquals(List.of(), entries(CliAuditTrail.who()), "nothing reached the table");
    archiveDown.set(false);
    List<AuditEntry> stored = Eventually.until(Duration.ofSeconds(40), "three entries in the table",
        () -> entries(CliAuditTrail.who()), l -> l.size() == 3);
    assertEquals(List.of("4", "3", "2"), stored.stream().map(x -> x.params().getJsonObject("options")
        .getString("--weight")).toList(), "newest first, each once");
    Eventually.until(Duration.ofSeconds(10), "auditX drained", () -> TestRedis.cmd("XLEN", auditX).toLong(),
        n -> n == 0);
  }
}
