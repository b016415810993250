package io.conveyor.archive;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxException;
import io.conveyor.testing.BlackholeProxy;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.RecordingArchive;
import io.conveyor.testing.RecordingArchive.Write;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Archiving on real nodes: one leader at a time, takeover, outages, and reads that fall through. */
class ArchiveTest {
  private static final String ORDER = "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'util/fixed-reply','params':{'reply':{'done':true}}}]}";
  private final List<TestNode> nodes = new ArrayList<>();
  private final List<Write> writes = new CopyOnWriteArrayList<>();
  private final Map<String, RecordingArchive> archives = new HashMap<>();
  private final List<String> tables = new ArrayList<>();

  @AfterEach
  void stopNodes() {
    archives.values().forEach(RecordingArchive::release);
    for (int i = nodes.size() - 1; i >= 0; i--) {
      nodes.get(i).close();
    }
    tables.forEach(TestDatabase::drop);
  }

  /** A node whose archive writes are recorded under its name. */
  private TestNode start(TestNode n, String name) {
    n.archive(real -> {
      RecordingArchive r = new RecordingArchive(real, name, writes);
      archives.put(name, r);
      return r;
    }).start(new TestSteps().registry());
    nodes.add(n);
    return n;
  }

  private TestNode onPostgres(TestNode n) {
    String table = TestDatabase.newTable();
    tables.add(table);
    return n.set("ARCHIVE_URL", TestDatabase.url()).set("ARCHIVE_TABLE", table);
  }

  private static long inRedis(TestNode n, List<String> txIds) {
    return txIds.stream().filter(id -> cmd("EXISTS", n.keys.stateH(id)).toLong() == 1).count();
  }

  private List<String> startMany(TestNode n, int count) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ids.add(n.start("order", new JsonObject().put("i", i)));
    }
    // read through the archive too: with no archive delay a transaction may leave Redis at once
    for (String id : ids) {
      Eventually.until(Duration.ofSeconds(10), id + " to finish", () -> n.transactions.status(id, "acme").await(),
          s -> s.status().isFinal());
    }
    return ids;
  }

  private Set<String> written() {
    Set<String> all = new HashSet<>();
    writes.forEach(w -> all.addAll(w.txIds()));
    return all;
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgresql"})
  void an_archived_transaction_reads_exactly_as_before_by_txId_and_by_externalId(String store) {
    MutableClock clock = new MutableClock(System.currentTimeMillis());
    TestNode n = new TestNode().clock(clock).set("ARCHIVE_INTERVAL", "50ms").pipeline("order", ORDER);
    TestNode node = start(store.equals("h2") ? n : onPostgres(n), "a");
    String txId = node.transactions.start(new JsonObject().put("type", "order").put("owner", "acme")
        .put("externalId", "order-77").put("metadata", new JsonObject().put("shop", "north"))
        .put("input", new JsonObject())).await().txId();
    node.awaitFinal(txId);
    JsonObject before = node.transactions.status(txId, "acme").await().toJson();
    clock.advance(Duration.ofSeconds(61)); // past archive.delay
    Eventually.until(Duration.ofSeconds(10), "the archive to take it", () -> inRedis(node, List.of(txId)),
        left -> left == 0);
    assertEquals(before, node.transactions.status(txId, "acme").await().toJson());
    assertEquals(before, node.transactions.byExternalId("order-77", "acme").await().toJson());
    // once the externalId's uniqueness period is over, only the archive knows it
    cmd("DEL", node.keys.externalId("acme", "order-77"));
    assertEquals(before, node.transactions.byExternalId("order-77", "acme").await().toJson());
    assertEquals(TxException.Kind.NOT_FOUND, refusal(() -> node.transactions.status(txId, "globex").await()));
    assertEquals(TxException.Kind.ALREADY_FINAL, refusal(() -> node.transactions.cancel(txId, "acme").await()));
    assertEquals(TxException.Kind.ALREADY_FINAL,
        refusal(() -> node.transactions.setSwitch(txId, "acme", "go", true).await()));
    assertEquals(TxException.Kind.NOT_FOUND, refusal(() -> node.transactions.cancel(txId, "globex").await()));
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgresql"})
  void the_leader_deletes_what_completed_longer_ago_than_the_retention_and_keeps_the_rest(String store) {
    MutableClock clock = new MutableClock(System.currentTimeMillis());
    TestNode n = new TestNode().clock(clock).set("ARCHIVE_INTERVAL", "50ms").set("ARCHIVE_DELAY", "0s")
        .set("ARCHIVE_RETENTION", "2h").pipeline("order", ORDER);
    TestNode node = start(store.equals("h2") ? n : onPostgres(n), "a");
    List<String> old = startMany(node, 3);
    Eventually.until(Duration.ofSeconds(10), "the first three archived", () -> inRedis(node, old), left -> left == 0);
    clock.advance(Duration.ofMinutes(90));
    List<String> recent = startMany(node, 2);
    Eventually.until(Duration.ofSeconds(10), "the next two archived", () -> inRedis(node, recent), left -> left == 0);
    // 91 minutes on, the first three completed 3 h 1 min ago, the two others 91 min ago
    clock.advance(Duration.ofMinutes(91));
    Eventually.until(Duration.ofSeconds(10), "the first three deleted", () -> old.stream()
        .filter(id -> node.node().archive().find(id).await() != null).count(), left -> left == 0);
    for (String id : recent) {
      assertEquals(io.conveyor.model.TxStatus.SUCCESS, node.node().archive().find(id).await().summary().status(),
          id + " is within the retention");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgresql"})
  void the_leader_prunes_audit_entries_older_than_audit_retention_and_keeps_the_rest(String store) {
    MutableClock clock = new MutableClock(System.currentTimeMillis());
    TestNode n = new TestNode().clock(clock).set("ARCHIVE_INTERVAL", "50ms").set("ARCHIVE_RETENTION", "0s")
        .set("AUDIT_RETENTION", "2d").pipeline("order", ORDER); // PostgreSQL's prune keeps a day at least
    TestNode node = start(store.equals("h2") ? n : onPostgres(n), "a");
    long now = clock.millis();
    node.node().archive().appendAudit(List.of(audit(now - Duration.ofDays(3).toMillis(), "old"),
        audit(now - Duration.ofHours(1).toMillis(), "recent"))).await();
    clock.advance(Duration.ofSeconds(61)); // the next retention pass
    var all = new io.conveyor.database.AuditQuery(null, null, null, null, null, null, null, null, 10);
    List<String> left = Eventually.until(Duration.ofSeconds(10), "the old entry pruned", () -> node.node().archive()
        .audit(all).await().stream().map(io.conveyor.model.AuditEntry::keyId).toList(), l -> !l.contains("old"));
    assertEquals(List.of("recent"), left);
  }

  private static io.conveyor.model.AuditEntry audit(long at, String keyId) {
    return new io.conveyor.model.AuditEntry(0, at, keyId, "ops", "DELETE /api/v1/pipelines/:name", "order", "ok", 200,
        null, "127.0.0.1", "http", "node-x", new io.vertx.core.json.JsonObject());
  }

  private static TxException.Kind refusal(Runnable call) {
    try {
      call.run();
    } catch (TxException e) {
      return e.kind();
    }
    throw new AssertionError("expected a refusal");
  }

  @Test
  void three_nodes_compete_one_writes_at_a_time_and_another_takes_over_from_a_leader_that_hangs() {
    TestNode first = new TestNode().set("ARCHIVE_DELAY", "0s").set("ARCHIVE_LEASE", "1s")
        .set("ARCHIVE_GRACE", "500ms").set("ARCHIVE_INTERVAL", "50ms").set("ARCHIVE_BATCH_SIZE", "25")
        .set("ARCHIVE_TIMEOUT", "500ms").pipeline("order", ORDER);
    start(first, "a");
    start(first.sibling(), "b");
    start(first.sibling(), "c");
    List<String> ids = startMany(first, 300);
    Eventually.until(Duration.ofSeconds(20), "all 300 archived and gone from Redis",
        () -> inRedis(first, ids), left -> left == 0);
    assertTrue(written().containsAll(ids));
    assertNoOverlap();

    // the leader's writes hang: each times out, and after three in a row it hands the lease on to another
    // (with several partitions, partition 0's leader: it hangs on every partition it leads)
    // (a lease may be between two holders for a moment, as the partitions' assignment settles on three nodes: with
    // several partitions, the one it settles on is the lowest nodeId, which wants partition 0 in any view; another
    // holder read before that would hand it on, and never be given a batch to hang on)
    String owner = first.keys.partitions() == 1 ? null
        : nodes.stream().map(n -> n.node().nodeId()).sorted().findFirst().orElseThrow();
    String leaderId = Eventually.until(Duration.ofSeconds(10), "the settled leader of partition 0's archive", () -> {
      var lock = cmd("GET", first.keys.lock1(io.conveyor.redis.LeaderRole.ARCHIVE, 0));
      return lock == null ? null : lock.toString();
    }, id -> id != null && (owner == null || owner.equals(id)));
    String leader = nodes.stream().filter(n -> n.node().nodeId().equals(leaderId)).findFirst()
        .map(n -> List.of("a", "b", "c").get(nodes.indexOf(n))).orElseThrow();
    archives.get(leader).freeze();
    int before = writes.size();
    List<String> more = startMany(first, 100);
    Eventually.until(Duration.ofSeconds(20), "another node to archive the rest",
        () -> inRedis(first, more), left -> left == 0);
    assertTrue(archives.get(leader).frozenAt() > 0, "the leader was given a batch and hung on it");
    // a copy: a view of a CopyOnWriteArrayList fails once the list changes, and a late write may still come
    List<Write> all = List.copyOf(writes);
    List<Write> after = all.subList(before, all.size());
    assertTrue(after.stream().noneMatch(w -> w.node().equals(leader)));
    assertTrue(written().containsAll(more));
    Write takeover = after.stream().filter(w -> first.keys.partitionOf(w.txIds().get(0)) == 0).findFirst()
        .orElseThrow(() -> new AssertionError("nobody archived partition 0 after its leader hung"));
    long takeoverMs = (takeover.start() - archives.get(leader).frozenAt()) / 1_000_000;
    System.out.printf("archive takeover after a hung leader: %d ms (three writes timed out at 500 ms)%n",
        takeoverMs);
    assertNoOverlap();
  }

  /**
   * No two writes of different nodes were ever under way at the same time in one partition (each partition
   * has its own archive lease; a write holds one partition's transactions).
   */
  private void assertNoOverlap() {
    List<Write> all = new ArrayList<>(writes);
    io.conveyor.redis.Keys keys = nodes.get(0).keys;
    for (Write w : all) {
      assertEquals(1, w.txIds().stream().map(keys::partitionOf).distinct().count(), "one partition per write");
    }
    for (int i = 0; i < all.size(); i++) {
      for (int j = i + 1; j < all.size(); j++) {
        Write x = all.get(i);
        Write y = all.get(j);
        if (!x.node().equals(y.node())
            && keys.partitionOf(x.txIds().get(0)) == keys.partitionOf(y.txIds().get(0))) {
          assertTrue(x.end() <= y.start() || y.end() <= x.start(), x.node() + " and " + y.node() + " overlapped");
        }
      }
    }
  }

  @Test
  void while_the_database_is_unreachable_redis_keeps_everything_and_afterwards_all_is_archived_and_cleaned() {
    try (BlackholeProxy proxy = new BlackholeProxy(TestDatabase.port())) {
      String table = TestDatabase.newTable();
      tables.add(table);
      TestNode node = start(new TestNode().set("ARCHIVE_URL", TestDatabase.urlVia(proxy.port()))
          .set("ARCHIVE_TABLE", table).set("ARCHIVE_DELAY", "0s").set("ARCHIVE_INTERVAL", "50ms")
          .set("ARCHIVE_TIMEOUT", "300ms").set("ARCHIVE_MAX_BACKOFF", "200ms").pipeline("order", ORDER), "a");
      proxy.blackhole();
      List<String> ids = startMany(node, 50);
      List<JsonObject> before = ids.stream().map(id -> node.transactions.status(id, "acme").await().toJson()).toList();
      int attempts = archives.get("a").attempts();
      Eventually.until(Duration.ofSeconds(20), "writes to be tried and fail", () -> archives.get("a").attempts(),
          n -> n >= attempts + 3);
      assertEquals(50, inRedis(node, ids), "nothing leaves Redis while the archive is down");
      assertEquals(50L, node.total("ZCARD", node.keys::toArchiveZ));
      proxy.reopen();
      Eventually.until(Duration.ofSeconds(20), "the archive to catch up", () -> inRedis(node, ids), n -> n == 0);
      assertEquals(50L, ((Number) TestDatabase.query("SELECT count(*) FROM " + table)).longValue());
      assertEquals(0L, node.total("ZCARD", node.keys::toArchiveZ));
      for (int i = 0; i < ids.size(); i++) {
        assertEquals(before.get(i), node.transactions.status(ids.get(i), "acme").await().toJson());
      }
    }
  }

  @Test
  void a_node_that_stops_gracefully_confirms_its_last_batch_and_hands_the_lease_on_at_once() {
    TestNode a = start(new TestNode().set("ARCHIVE_DELAY", "0s").set("ARCHIVE_INTERVAL", "50ms")
        .pipeline("order", ORDER), "a");
    List<String> ids = startMany(a, 20);
    Eventually.until(Duration.ofSeconds(10), "the batch to be archived", () -> inRedis(a, ids), n -> n == 0);
    // the only node leads every partition's archive
    List<String> locks = a.keys.all().stream().map(p -> a.keys.lock1(io.conveyor.redis.LeaderRole.ARCHIVE, p)).toList();
    for (String lock : locks) {
      assertEquals(a.node().nodeId(), cmd("GET", lock).toString(), lock);
    }
    TestNode b = start(a.sibling(), "b");
    a.node().stop().await();
    for (String lock : locks) {
      Eventually.until(Duration.ofSeconds(10), "b to lead " + lock, () -> String.valueOf(cmd("GET", lock)),
          b.node().nodeId()::equals);
    }
    List<String> more = startMany(b, 5);
    Eventually.until(Duration.ofSeconds(10), "b to archive", () -> inRedis(b, more), n -> n == 0);
    assertNotEquals(0, writes.stream().filter(w -> w.node().equals("b")).count());
  }
}
