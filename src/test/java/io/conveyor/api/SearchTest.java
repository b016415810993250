package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.domain.Search;
import io.conveyor.model.TxException;
import io.conveyor.model.TxStatus;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The transaction search over a known mix: transactions of two owners and four pipelines, some archived (in
 * PostgreSQL), some finished but still in Redis, some queued, running, waiting on a switch or scheduled. Each
 * filter answers exactly the transactions the test knows to match, paged three at a time through the cursor;
 * paging while new transactions start never repeats nor skips one.
 */
class SearchTest {
  private static final String PIPELINES_ORDER = "{'name':'order','nodeGroup':'master','transactionType':true,"
      + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}";
  private static final String PIPELINES_REFUND = "{'name':'refund','nodeGroup':'master','transactionType':true,"
      + "'steps':[{'type':'util/fail','params':{'note':'no'}}]}";
  private static final String PIPELINES_HOLD = "{'name':'hold','nodeGroup':'master','transactionType':true,"
      + "'steps':[{'type':'test/hold'}]}";
  private static final String PIPELINES_GATE = "{'name':'gate','nodeGroup':'master','transactionType':true,"
      + "'steps':[{'type':'util/wait','params':{'switch':'go'}}]}";
  private final TestSteps steps = new TestSteps();
  private final List<TestNode> nodes = new ArrayList<>();

  /** What the test knows of each transaction it started. */
  private record Known(String txId, String owner, String pipeline, String phase, String externalId, String text,
                       long created) {
  }

  private final Map<String, Known> known = new HashMap<>();

  @AfterEach
  void stop() {
    for (int i = nodes.size() - 1; i >= 0; i--) {
      nodes.get(i).close();
    }
  }

  private TestNode node(String archiveDelay, TestNode from) {
    TestNode n = (from == null ? new TestNode() : from.sibling()).set("ARCHIVE_URL", TestDatabase.url())
        .set("ARCHIVE_TABLE", table).set("ARCHIVE_DELAY", archiveDelay).set("ARCHIVE_INTERVAL", "50ms")
        .set("NODE_IDLE_WAIT", "200ms");
    if (from == null) {
      n.pipeline("order", PIPELINES_ORDER).pipeline("refund", PIPELINES_REFUND).pipeline("hold", PIPELINES_HOLD)
          .pipeline("gate", PIPELINES_GATE);
    }
    nodes.add(n.start(steps.registry()));
    return n;
  }

  private final String table = TestDatabase.newTable();

  private String start(TestNode node, String owner, String pipeline, String phase, String ext, String text,
                       JsonObject extra) {
    JsonObject body = new JsonObject().put("type", pipeline).put("owner", owner).put("input", new JsonObject())
        .put("metadata", new JsonObject().put("note", text));
    if (ext != null) {
      body.put("externalId", ext);
    }
    if (extra != null) {
      body.mergeIn(extra);
    }
    var s = node.transactions.start(body).await();
    known.put(s.txId(), new Known(s.txId(), owner, pipeline, phase, ext, text, s.created().toEpochMilli()));
    return s.txId();
  }

  private Search search(TestNode node) {
    return new Search(node.store.reads, node.keys, node.node().archive());
  }

  /** Every page of a search, three at a time, in order; fails on a repeat. */
  private List<String> all(Search s, Map<String, String> params) {
    List<String> out = new ArrayList<>();
    Map<String, String> p = new HashMap<>(params);
    p.put("limit", "3");
    for (int page = 0; page < 100; page++) {
      JsonObject r = s.run(Search.parse(p, null)).await();
      for (Object o : r.getJsonArray("transactions")) {
        String id = ((JsonObject) o).getString("txId");
        assertTrue(!out.contains(id), id + " repeated in " + params + ": " + out);
        out.add(id);
      }
      if (r.getString("next") == null) {
        return out;
      }
      p.put("cursor", r.getString("next"));
    }
    throw new AssertionError("more than 100 pages");
  }

  private void matches(Search s, Map<String, String> params, Predicate<Known> which) {
    List<String> found = all(s, params);
    List<Known> expected = known.values().stream().filter(which)
        .sorted((a, b) -> a.created() != b.created() ? Long.compare(b.created(), a.created())
            : b.txId().compareTo(a.txId())).toList();
    assertEquals(expected.stream().map(Known::txId).toList(), found, "search " + params);
  }

  @Test
  void each_filter_finds_exactly_its_transactions_live_and_archived_newest_first() {
    TestNode first = node("0s", null);
    long t0 = System.currentTimeMillis();
    // archived: finished with archive.delay 0
    List<String> archived = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      archived.add(start(first, i % 2 == 0 ? "acme" : "bolt", "order", "success", "a-" + i, "Blue whale " + i, null));
    }
    archived.add(start(first, "acme", "refund", "failed", null, "red fox", null));
    for (String id : archived) {
      assertEquals(TxStatus.valueOf(known.get(id).phase().toUpperCase()), first.awaitFinal(id).status());
    }
    Eventually.until(Duration.ofSeconds(10), "all five archived", () -> archived.stream()
        .filter(id -> first.store.reads.getState(id).await() != null).count(), n -> n == 0);
    TestNode node = first.sibling().set("ARCHIVE_DELAY", "1h");
    nodes.remove(first);
    first.stopKeepingData();
    nodes.add(node.start(steps.registry()));

    // finished and still in Redis
    for (int i = 0; i < 3; i++) {
      String id = start(node, "bolt", "order", "success", null, "green blue " + i, null);
      assertEquals(TxStatus.SUCCESS, node.awaitFinal(id).status());
    }
    String failedLive = start(node, "acme", "refund", "failed", "f-1", "Blue jay", null);
    assertEquals(TxStatus.FAILED, node.awaitFinal(failedLive).status());
    // running (held by its step), waiting on a switch, scheduled for later
    String running = start(node, "acme", "hold", "running", null, "amber", null);
    var held = steps.nextHeld();
    String waiting = start(node, "bolt", "gate", "waiting", "g-1", "teal", null);
    Eventually.until(Duration.ofSeconds(10), "the gate to wait", () -> node.store.reads.getState(waiting).await()
        .processingState(), "sleeping"::equals);
    start(node, "acme", "order", "scheduled", null, "later blue", new JsonObject().put("delay", "1h"));
    long t1 = System.currentTimeMillis() + 1;

    // a walk of Redis that stops after looking at two entries (a rare filter over a deep backlog) still pages
    // to exactly the same answers: a page never holds what lies below where a source stopped
    for (Search s : List.of(search(node), new Search(node.store.reads, node.keys, node.node().archive(), 2))) {
      filters(s, archived, failedLive, waiting, t0, t1);
    }
    Search s = search(node);
    // a client sees its own only
    JsonArray own = s.run(Search.parse(Map.of("limit", "100"), "acme")).await().getJsonArray("transactions");
    Set<String> ownIds = new HashSet<>();
    own.forEach(o -> ownIds.add(((JsonObject) o).getString("txId")));
    assertEquals(known.values().stream().filter(k -> k.owner().equals("acme")).map(Known::txId)
        .collect(java.util.stream.Collectors.toSet()), ownIds);
    // each answer is the transaction as GET shows it, with where it stands
    JsonObject one = s.run(Search.parse(Map.of("externalId", "g-1"), null)).await().getJsonArray("transactions")
        .getJsonObject(0);
    assertEquals("waiting", one.getString("phase"));
    assertEquals("gate", one.getString("type"));
    held.complete(io.conveyor.pipeline.StepResult.success(new JsonObject()));
    assertEquals(TxStatus.SUCCESS, node.awaitFinal(running).status());
  }

  private void filters(Search s, List<String> archived, String failedLive, String waiting, long t0, long t1) {
    matches(s, Map.of(), k -> true);
    matches(s, Map.of("status", "success"), k -> k.phase().equals("success"));
    matches(s, Map.of("status", "failed,running"), k -> k.phase().equals("failed") || k.phase().equals("running"));
    matches(s, Map.of("status", "waiting"), k -> k.txId().equals(waiting));
    matches(s, Map.of("status", "success,failed"), k -> k.phase().equals("success") || k.phase().equals("failed"));
    matches(s, Map.of("status", "failed,cancelled", "owner", "acme"), k -> k.phase().equals("failed")
        && k.owner().equals("acme"));
    matches(s, Map.of("status", "scheduled"), k -> k.phase().equals("scheduled"));
    matches(s, Map.of("pipeline", "order"), k -> k.pipeline().equals("order"));
    matches(s, Map.of("pipeline", "order", "status", "success"), k -> k.pipeline().equals("order")
        && k.phase().equals("success"));
    matches(s, Map.of("owner", "bolt"), k -> k.owner().equals("bolt"));
    matches(s, Map.of("externalId", "a-2"), k -> "a-2".equals(k.externalId()));
    matches(s, Map.of("externalId", "f-1"), k -> k.txId().equals(failedLive));
    matches(s, Map.of("q", "BLUE"), k -> k.text().toLowerCase().contains("blue"));
    matches(s, Map.of("q", "blue", "owner", "acme"), k -> k.text().toLowerCase().contains("blue")
        && k.owner().equals("acme"));
    long mid = known.get(archived.get(4)).created() + 1;
    matches(s, Map.of("to", Long.toString(mid)), k -> k.created() < mid);
    matches(s, Map.of("from", Long.toString(mid), "to", Long.toString(t1)), k -> k.created() >= mid);
    matches(s, Map.of("from", java.time.Instant.ofEpochMilli(t0 - 1).toString(), "status", "failed"),
        k -> k.phase().equals("failed"));
  }

  @Test
  void paging_while_transactions_start_never_repeats_nor_skips_one() throws Exception {
    TestNode node = node("0s", null);
    List<String> before = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      before.add(start(node, "acme", "order", "success", null, "x" + i, null));
    }
    for (String id : before) {
      node.awaitFinal(id);
    }
    Search s = search(node);
    Set<String> seen = new LinkedHashSet<>();
    Map<String, String> p = new HashMap<>(Map.of("limit", "4"));
    int extra = 0;
    while (true) {
      // between pages: more start (above every cursor), and earlier ones move to the archive
      for (int i = 0; i < 3; i++) {
        start(node, "acme", "order", "success", null, "new", null);
        extra++;
      }
      JsonObject r = s.run(Search.parse(p, null)).await();
      for (Object o : r.getJsonArray("transactions")) {
        String id = ((JsonObject) o).getString("txId");
        assertTrue(seen.add(id), id + " repeated");
      }
      if (r.getString("next") == null) {
        break;
      }
      p.put("cursor", r.getString("next"));
    }
    assertTrue(seen.containsAll(before), "skipped: " + before.stream().filter(id -> !seen.contains(id)).toList());
    assertTrue(extra > 0);
  }

  @Test
  void bad_parameters_are_refused_by_name() {
    assertEquals("status", assertThrows(TxException.class, () -> Search.parse(Map.of("status", "done"), null))
        .field());
    assertTrue(assertThrows(TxException.class, () -> Search.parse(Map.of("status", "sucess"), null)).getMessage()
        .contains("did you mean success"));
    assertEquals("limit", assertThrows(TxException.class, () -> Search.parse(Map.of("limit", "0"), null)).field());
    assertEquals("cursor", assertThrows(TxException.class, () -> Search.parse(Map.of("cursor", "abc"), null)).field());
    assertEquals("from", assertThrows(TxException.class, () -> Search.parse(Map.of("from", "yesterday"), null))
        .field());
    assertEquals("to", assertThrows(TxException.class, () -> Search.parse(Map.of("from", "10", "to", "5"), null))
        .field());
    assertEquals("owner", assertThrows(TxException.class, () -> Search.parse(Map.of("owner", "bolt"), "acme"))
        .field());
  }
}
