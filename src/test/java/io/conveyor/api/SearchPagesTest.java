package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.domain.Search;
import io.conveyor.model.TxStatus;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 32's empty pages: among thousands of live transactions a few failed ones, spread out, must fill the first
 * page of a failed-only search, not hide behind empty pages with a cursor. Walks are made long on purpose (100
 * entries per script call), as a deep backlog makes them in production.
 */
class SearchPagesTest {
  private static final int LIVE = 3_000;
  private static final int EVERY = 500;
  private final TestSteps steps = new TestSteps();
  private TestNode node;
  /** The failed ones as a search orders them: newest first (created, then txId, both descending). */
  private final List<String> failed = new ArrayList<>();

  @BeforeEach
  void fill() {
    node = new TestNode().set("ARCHIVE_URL", TestDatabase.url()).set("ARCHIVE_TABLE", TestDatabase.newTable())
        .set("ARCHIVE_DELAY", "1h").set("NODE_IDLE_WAIT", "200ms")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,"
            + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .pipeline("refund", "{'name':'refund','nodeGroup':'master','transactionType':true,"
            + "'steps':[{'type':'util/fail','params':{'note':'no'}}]}")
        .start(steps.registry());
    // scheduled for later: they stay live without running; one in EVERY fails at once. The newest EVERY / 2 hold
    // no failure, so the first script call of a walk finds none.
    for (int from = 0; from < LIVE; from += 100) {
      List<Future<io.conveyor.model.TxSummary>> batch = new ArrayList<>();
      for (int i = from; i < from + 100; i++) {
        boolean fails = i % EVERY == EVERY / 2;
        JsonObject body = new JsonObject().put("type", fails ? "refund" : "order").put("owner", "acme")
            .put("input", new JsonObject());
        if (!fails) {
          body.put("delay", "1h");
        }
        batch.add(fails ? node.transactions.start(body) : node.transactions.start(body).map(s -> null));
      }
      Future.all(batch).await();
      batch.stream().map(Future::result).filter(t -> t != null).forEach(t -> failed.add(0, t.txId()));
    }
    for (String id : failed) {
      assertEquals(TxStatus.FAILED, node.awaitFinal(id).status());
    }
  }

  @AfterEach
  void stop() {
    node.close();
  }

  private JsonObject page(Search s, Map<String, String> params) {
    return s.run(Search.parse(params, null)).await();
  }

  private static List<String> ids(JsonObject page) {
    List<String> out = new ArrayList<>();
    page.getJsonArray("transactions").forEach(o -> out.add(((JsonObject) o).getString("txId")));
    return out;
  }

  /** failed alone reads the phase index; with queued (no index, and none is queued) it walks every live one. */
  private static final List<String> STATUSES = List.of("failed", "failed,queued");

  @Test
  void a_page_holds_limit_matches_or_every_match_there_is() {
    Search s = new Search(node.store.reads, node.keys, node.node().archive(), 100);
    for (String status : STATUSES) {
      JsonObject all = page(s, Map.of("status", status, "limit", "50"));
      assertEquals(failed, ids(all), "every failed one on the first page, status " + status);
      assertNull(all.getString("next"));
      assertFalse(all.getBoolean("partial"));

      JsonObject first = page(s, Map.of("status", status, "limit", "4"));
      assertEquals(failed.subList(0, 4), ids(first));
      assertNotNull(first.getString("next"));
      assertFalse(first.getBoolean("partial"));
      JsonObject second = page(s, Map.of("status", status, "limit", "4", "cursor", first.getString("next")));
      assertEquals(failed.subList(4, failed.size()), ids(second));
      assertNull(second.getString("next"));
    }
  }

  @Test
  void a_walk_cut_by_its_budget_says_so_and_its_cursor_goes_on() {
    // every reading of this ticker moves it a millisecond: a budget of one ends each walk after its first round
    AtomicLong nanos = new AtomicLong();
    Ticker ticker = () -> nanos.addAndGet(1_000_000);
    Search s = new Search(node.store.reads, node.keys, node.node().archive(), 100, ticker, Duration.ofMillis(1));
    Map<String, String> p = new HashMap<>(Map.of("status", STATUSES.get(1), "limit", "50"));
    List<String> found = new ArrayList<>();
    int partials = 0;
    for (int calls = 0; calls < LIVE; calls++) {
      JsonObject r = page(s, p);
      found.addAll(ids(r));
      if (r.getString("next") == null) {
        assertFalse(r.getBoolean("partial"));
        break;
      }
      // a short page with a cursor is never silent about it
      assertTrue(r.getBoolean("partial"), r.encode());
      assertNotNull(r.getString("scannedTo"), r.encode());
      partials++;
      p.put("cursor", r.getString("next"));
    }
    assertEquals(failed, found, "each failed one once, newest first");
    assertTrue(partials > 0, "the budget cut at least one walk");
  }
}
