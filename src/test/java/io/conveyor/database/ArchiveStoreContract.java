package io.conveyor.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.conveyor.model.Ids;
import io.conveyor.model.TxSummary;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every archive store must do; run against each store by a subclass. */
abstract class ArchiveStoreContract {
  protected Vertx vertx;
  protected ArchiveStore store;

  /** A new, empty store (its own table or file), not yet opened. */
  protected abstract ArchiveStore newStore(Vertx vertx);

  /** Another store on the same table or file, as a second node would open it. */
  protected abstract ArchiveStore sameStore(Vertx vertx);

  /** How many rows hold this txId, read around the store. */
  protected abstract long rows(String txId);

  protected void cleanUp() {
  }

  /** Runs one statement on the store's database as the application's user, around the store. */
  protected abstract void sql(String statement) throws Exception;

  /** Whether the store's audit table refuses TRUNCATE too (H2 has no trigger for it). */
  protected boolean refusesTruncate() {
    return true;
  }

  /** The audit table's name (the store's table and _audit). */
  protected abstract String auditTable();

  static io.conveyor.model.AuditEntry audit(long at, String keyId, String action, String outcome) {
    return new io.conveyor.model.AuditEntry(0, at, keyId, "ops", action, "orders", outcome,
        outcome.equals("ok") ? 200 : 400, outcome.equals("ok") ? null : "invalid-input", "127.0.0.1", "http", "node-1",
        new JsonObject().put("bodyBytes", 12));
  }

  private static AuditQuery all(int limit) {
    return new AuditQuery(null, null, null, null, null, null, null, null, limit);
  }

  @Test
  void audit_text_longer_than_its_column_is_cut_to_fit_rather_than_refused() {
    long now = 1_800_000_000_000L;
    io.conveyor.model.AuditEntry e = audit(now, "k".repeat(100), "POST /x", "refused");
    store.appendAudit(List.of(new io.conveyor.model.AuditEntry(0, now, e.keyId(), "o".repeat(2000), e.action(),
        e.target(), e.outcome(), e.status(), "x".repeat(300), "cli:" + "u".repeat(300), "cli", "n".repeat(100),
        e.params()))).await();
    io.conveyor.model.AuditEntry read = store.audit(all(10)).await().get(0);
    assertEquals(List.of(64, 1024, 256, 256, 64), List.of(read.keyId().length(), read.owner().length(),
        read.error().length(), read.remote().length(), read.node().length()));
    assertEquals("k".repeat(63) + "…", read.keyId());
  }

  @Test
  void audit_entries_written_again_with_the_same_stream_ids_are_stored_once() {
    long now = 1_800_000_000_000L;
    List<io.conveyor.model.AuditEntry> entries = List.of(audit(now, "aaa", "POST /x", "ok"),
        audit(now + 1, "bbb", "POST /x", "ok"));
    store.appendAudit(entries, List.of("1-0", "1-1")).await();
    store.appendAudit(entries, List.of("1-0", "1-1")).await();
    store.appendAudit(List.of(audit(now + 2, "ccc", "POST /x", "ok")), List.of("2-0")).await();
    assertEquals(List.of("ccc", "bbb", "aaa"), store.audit(all(10)).await().stream()
        .map(io.conveyor.model.AuditEntry::keyId).toList());
  }

  @Test
  void audit_entries_are_read_newest_first_by_filter_and_a_page_at_a_time() {
    long now = 1_800_000_000_000L;
    store.appendAudit(List.of(audit(now, "aaa", "PUT /api/v1/pipelines/:name", "ok"),
        audit(now + 1, "bbb", "DELETE /api/v1/pipelines/:name", "refused"),
        audit(now + 2, "aaa", "DELETE /api/v1/pipelines/:name", "ok"))).await();
    List<io.conveyor.model.AuditEntry> page = store.audit(all(2)).await();
    assertEquals(List.of(now + 2, now + 1), page.stream().map(io.conveyor.model.AuditEntry::at).toList());
    assertEquals(new JsonObject().put("bodyBytes", 12), page.get(0).params());
    List<io.conveyor.model.AuditEntry> rest = store.audit(new AuditQuery(null, null, null, null, null, null, null,
        page.get(1).id(), 2)).await();
    assertEquals(List.of(now), rest.stream().map(io.conveyor.model.AuditEntry::at).toList());
    assertEquals(1, store.audit(new AuditQuery(now, now + 2, "aaa", "ops", null, "orders", "ok", null, 10)).await()
        .size());
    assertEquals("bbb", store.audit(new AuditQuery(null, null, null, null, null, null, "refused", null, 10)).await()
        .get(0).keyId());
  }

  @Test
  void the_audit_table_refuses_update_and_delete_and_retention_prunes_only_what_is_older() {
    // a month ago: older than PostgreSQL's prune floor (a day), which counts from the database's now()
    long now = System.currentTimeMillis() - java.time.Duration.ofDays(30).toMillis();
    store.appendAudit(List.of(audit(now - 10_000, "old", "POST /x", "ok"), audit(now - 5_000, "old", "POST /x", "ok"),
        audit(now, "new", "POST /x", "ok"))).await();
    List<String> statements = new ArrayList<>(List.of("UPDATE " + auditTable() + " SET outcome = 'ok'",
        "DELETE FROM " + auditTable()));
    if (refusesTruncate()) {
      statements.add("TRUNCATE TABLE " + auditTable());
    }
    for (String refused : statements) {
      Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> sql(refused));
      org.junit.jupiter.api.Assertions.assertTrue(String.valueOf(e.getMessage()).contains("append-only"),
          refused + ": " + e.getMessage());
    }
    assertEquals(3, store.audit(all(10)).await().size());
    assertEquals(1, store.pruneAuditBefore(now - 6_000, 1000).await());
    assertEquals(1, store.pruneAuditBefore(now - 1, 1).await());
    assertEquals(List.of("new"), store.audit(all(10)).await().stream().map(io.conveyor.model.AuditEntry::keyId)
        .toList());
    // the prune's permission ends with it: a plain DELETE is refused again
    org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> sql("DELETE FROM " + auditTable()));
  }

  @BeforeEach
  void openStore() {
    vertx = Vertx.vertx();
    store = newStore(vertx);
    store.open().await();
  }

  @AfterEach
  void closeStore() {
    store.close().await();
    vertx.close().await();
    cleanUp();
  }

  static ArchivedTx tx(String owner, String externalId, long created, String status, JsonObject output) {
    String txId = Ids.txId();
    JsonObject state = new JsonObject().put("owner", owner).put("type", "order").put("version", "v1")
        .put("status", status).put("processingState", "complete").put("attempt", "1")
        .put("created", Long.toString(created)).put("updated", Long.toString(created + 5))
        .put("completed", Long.toString(created + 5)).put("metadata", "{\"k\":\"v\"}")
        .put("output", output.encode()).put("note", "").put("step", "2");
    if (externalId != null) {
      state.put("externalId", externalId);
    }
    return ArchivedTx.fromState(txId, state);
  }

  @Test
  void a_written_transaction_reads_back_with_the_same_state_and_summary() {
    ArchivedTx t = tx("acme", "order-1", 1_800_000_000_123L, "success", new JsonObject().put("done", true));
    store.write(List.of(t)).await();
    ArchivedTx back = store.find(t.txId()).await();
    assertEquals(t.state(), back.state());
    assertEquals(t, back);
    TxSummary summary = back.summary();
    assertEquals(t.summary().toJson(), summary.toJson());
    assertEquals("acme", summary.owner());
    assertEquals(new JsonObject().put("done", true), summary.output());
  }

  @Test
  void writing_a_transaction_again_replaces_it_and_keeps_one_row() {
    ArchivedTx t = tx("acme", null, 1_800_000_000_000L, "success", new JsonObject().put("n", 1));
    store.write(List.of(t)).await();
    JsonObject later = t.state().copy().put("output", "{\"n\":2}");
    store.write(List.of(ArchivedTx.fromState(t.txId(), later))).await();
    assertEquals(later, store.find(t.txId()).await().state());
    assertEquals(1, rows(t.txId()));
  }

  @Test
  void a_late_older_copy_changes_nothing_and_a_recorded_webhook_outcome_survives_a_copy_without_one() {
    ArchivedTx t = tx("acme", null, 1_800_000_000_000L, "success", new JsonObject().put("n", 1));
    JsonObject newer = t.state().copy().put("rev", "1").put("output", "{\"n\":2}");
    store.write(List.of(ArchivedTx.fromState(t.txId(), newer))).await();
    store.write(List.of(t)).await(); // the older copy, landing late
    assertEquals(newer, store.find(t.txId()).await().state());
    JsonObject outcome = new JsonObject().put("status", "delivered").put("attempts", 2);
    assertEquals(true, store.updateWebhook(t.txId(), outcome).await());
    store.write(List.of(ArchivedTx.fromState(t.txId(), newer))).await(); // the same copy again, without it
    assertEquals(outcome, store.find(t.txId()).await().webhook());
    assertEquals(false, store.updateWebhook(Ids.txId(), outcome).await());
  }

  @Test
  void a_pipelines_ended_transactions_are_listed_by_status_and_completion_time_oldest_first() {
    ArchivedTx a = tx("acme", null, 1_800_000_000_000L, "failed", new JsonObject());
    ArchivedTx b = tx("globex", null, 1_800_000_001_000L, "failed", new JsonObject());
    ArchivedTx ok = tx("acme", null, 1_800_000_001_500L, "success", new JsonObject());
    ArchivedTx late = tx("acme", null, 1_800_000_009_000L, "failed", new JsonObject());
    store.write(List.of(late, ok, b, a)).await();
    // completed is created + 5 ms
    assertEquals(List.of(a.txId(), b.txId()), store.ended("order", "failed", 1_800_000_000_000L, 1_800_000_002_000L,
        10).await());
    assertEquals(List.of(a.txId()), store.ended("order", "failed", 0, Long.MAX_VALUE, 1).await());
    assertEquals(List.of(), store.ended("other", "failed", 0, Long.MAX_VALUE, 10).await());
  }

  @Test
  void an_unknown_transaction_or_external_id_is_null() {
    assertNull(store.find(Ids.txId()).await());
    assertNull(store.findByExternalId("acme", "nothing").await());
  }

  @Test
  void lookup_by_external_id_finds_the_owners_latest_and_never_another_owners() {
    ArchivedTx older = tx("acme", "shared", 1_800_000_000_000L, "failed", new JsonObject());
    ArchivedTx newer = tx("acme", "shared", 1_800_000_100_000L, "success", new JsonObject());
    ArchivedTx other = tx("globex", "shared", 1_800_000_200_000L, "success", new JsonObject());
    store.write(List.of(older, newer, other)).await();
    assertEquals(newer.txId(), store.findByExternalId("acme", "shared").await().txId());
    assertEquals(other.txId(), store.findByExternalId("globex", "shared").await().txId());
    assertNull(store.findByExternalId("initech", "shared").await());
  }

  @Test
  void a_large_batch_lands_whole_in_one_write_and_odd_text_survives() {
    List<ArchivedTx> batch = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      batch.add(tx("acme", "e-" + i, 1_800_000_000_000L + i, "success",
          new JsonObject().put("i", i).put("text", "ünïcødé ✓ \"quoted\" \\ back\nslash")));
    }
    JsonObject big = new JsonObject().put("blob", "x".repeat(200_000));
    ArchivedTx large = tx("acme", null, 1_800_000_000_000L, "success", big);
    batch.add(large);
    store.write(batch).await();
    for (int i : new int[] {0, 999, 1999}) {
      assertEquals(batch.get(i).state(), store.find(batch.get(i).txId()).await().state());
    }
    assertEquals(big, store.find(large.txId()).await().summary().output());
    assertEquals(batch.get(1234).txId(), store.findByExternalId("acme", "e-1234").await().txId());
  }

  @Test
  void an_empty_batch_is_a_no_op_and_opening_again_keeps_the_data() {
    ArchivedTx t = tx("acme", null, 1_800_000_000_000L, "success", new JsonObject());
    store.write(List.of()).await();
    store.write(List.of(t)).await();
    // two more nodes open the same archive at once: the schema is there, nothing is lost
    ArchiveStore second = sameStore(vertx);
    ArchiveStore third = sameStore(vertx);
    Future.all(second.open(), third.open()).await();
    assertEquals(t, second.find(t.txId()).await());
    second.close().await();
    third.close().await();
  }

  @Test
  void nul_in_the_external_id_input_metadata_and_a_key_name_archives_and_reads_back_unchanged() {
    ArchivedTx t = tx("acme", "nul-\u0000-id", 1_800_000_000_000L, "success", new JsonObject().put("k", "v"));
    JsonObject state = t.state().copy()
        .put("input", "{\"k\\u0000ey\":\"a\u0000b\",\"raw\":\"c\\u0000d\"}")
        .put("metadata", "{\"tag\":\"x\u0000y \uFFFF0 \uFFFF\uFFFF\"}")
        .put("note\u0000field", "\u0000");
    ArchivedTx odd = ArchivedTx.fromState(t.txId(), state);
    ArchivedTx plain = tx("acme", "plain-1", 1_800_000_000_001L, "success", new JsonObject());
    store.write(List.of(odd, plain)).await();
    assertEquals(odd, store.find(odd.txId()).await());
    assertEquals(odd.txId(), store.findByExternalId("acme", "nul-\u0000-id").await().txId());
    assertNull(store.findByExternalId("acme", "nul-\uFFFF0-id").await());
    ArchiveStore.Found found = store.search(new ArchiveQuery("acme", null, null, "nul-\u0000-id", null, null, "x\u0000y",
        null, null, 10)).await();
    assertEquals(List.of(odd), found.rows());
    assertEquals(plain, store.find(plain.txId()).await());
    JsonObject outcome = new JsonObject().put("status", "failed").put("error", "\u0000");
    assertEquals(true, store.updateWebhook(odd.txId(), outcome).await());
    assertEquals(outcome, store.find(odd.txId()).await().webhook());
  }
}
