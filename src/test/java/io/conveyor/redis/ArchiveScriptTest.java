package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.redis.ArchiveHandoff.ArchiveBatch;
import io.conveyor.redis.ArchiveHandoff.ToArchive;
import io.conveyor.testing.ScriptTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** archive.lua against the real Redis: hand-out under the lease, confirmation, and what is never archived. */
class ArchiveScriptTest extends ScriptTest {
  private static final Duration LEASE = Duration.ofSeconds(60);
  private static final Duration HOLD = Duration.ofSeconds(90);
  private static final Duration GRACE = Duration.ofSeconds(5);

  /** A finished transaction due for archiving at dueAt. */
  private void finished(String txId, long dueAt, String processingState) {
    cmd("HSET", h.keys.stateH(txId), "owner", "acme", "type", "order", "status", "success", "processingState",
        processingState, "attempt", "1", "created", "1000", "updated", "2000", "completed", "2000", "output", "{}");
    cmd("ZADD", h.keys.toArchiveZ(0), Long.toString(dueAt), txId);
  }

  private ArchiveBatch call(String nodeId, List<ToArchive> written, int max) {
    return h.store.archive.archiveBatch(0, nodeId, written, max, LEASE, GRACE, HOLD).await();
  }

  @Test
  void a_leader_that_gives_its_batch_back_makes_it_due_at_once_for_the_next_and_what_is_gone_stays_gone() {
    long now = h.clock.millis();
    finished("tx-a", now - 1000, "complete");
    finished("tx-b", now - 1000, "complete");
    ArchiveBatch held = call("node-a", List.of(), 10);
    assertEquals(2, held.batch().size());
    assertTrue(call("node-a", List.of(), 10).batch().isEmpty(), "held: not due again yet");
    cmd("ZREM", h.keys.toArchiveZ(0), "tx-b"); // confirmed meanwhile (by the writer that was slow)
    h.store.archive.release(0, held.batch()).await();
    assertEquals(now, cmd("ZSCORE", h.keys.toArchiveZ(0), "tx-a").toLong());
    assertNull(cmd("ZSCORE", h.keys.toArchiveZ(0), "tx-b"));
    assertEquals(List.of("tx-a"), call("node-a", List.of(), 10).batch().stream().map(ToArchive::txId).toList());
  }

  @Test
  void the_leader_gets_due_finished_transactions_oldest_first_up_to_the_batch_size_and_others_get_none() {
    long now = h.clock.millis();
    finished("tx-a", now - 3000, "complete");
    finished("tx-b", now - 2000, "complete");
    finished("tx-c", now - 1000, "complete");
    finished("tx-later", now + 1000, "complete");
    ArchiveBatch first = call("node-a", List.of(), 2);
    assertTrue(first.leader());
    assertEquals(List.of("tx-a", "tx-b"), first.batch().stream().map(ToArchive::txId).toList());
    assertEquals("acme", first.batch().get(0).fields().getString("owner"));
    assertEquals("2000/0", first.batch().get(0).stamp());
    ArchiveBatch other = call("node-b", List.of(), 10);
    assertFalse(other.leader());
    assertTrue(other.batch().isEmpty());
    // handed out but not confirmed: nothing is deleted; they are due again once the hold has run out
    assertEquals(4L, cmd("ZCARD", h.keys.toArchiveZ(0)).toLong());
    assertEquals(now + HOLD.toMillis(), cmd("ZSCORE", h.keys.toArchiveZ(0), "tx-a").toLong());
    assertEquals(List.of("tx-c"), call("node-a", List.of(), 10).batch().stream().map(ToArchive::txId).toList());
    h.clock.advance(HOLD);
    assertEquals(List.of("tx-later", "tx-a", "tx-b", "tx-c"),
        call("node-a", List.of(), 10).batch().stream().map(ToArchive::txId).toList());
  }

  @Test
  void confirmation_deletes_the_state_and_the_entry_unless_the_state_changed_since_it_was_handed_out() {
    long now = h.clock.millis();
    finished("tx-a", now - 1000, "complete");
    finished("tx-b", now - 1000, "complete");
    List<ToArchive> batch = call("node-a", List.of(), 10).batch();
    cmd("HINCRBY", h.keys.stateH("tx-b"), "rev", "1"); // e.g. a webhook outcome recorded meanwhile
    ArchiveBatch next = call("node-a", batch, 10);
    assertEquals(1, next.confirmed());
    // tx-b is due again at once, with its new state
    assertEquals(0L, cmd("EXISTS", h.keys.stateH("tx-a")).toLong());
    assertEquals(1L, cmd("EXISTS", h.keys.stateH("tx-b")).toLong());
    assertEquals(List.of("tx-b"), next.batch().stream().map(ToArchive::txId).toList());
    assertEquals("2000/1", next.batch().get(0).stamp());
  }

  @Test
  void a_finished_transaction_whose_compensation_runs_is_neither_handed_out_nor_put_back_until_it_ends() {
    long now = h.clock.millis();
    finished("tx-a", now - 1000, "complete");
    finished("tx-b", now - 1000, "complete");
    List<ToArchive> batch = call("node-a", List.of(), 10).batch();
    assertEquals(2, batch.size());
    // written meanwhile: tx-a ran again (a rerun) and failed, and waits for its new compensation; tx-b was
    // already waiting for one when it became due (an entry an earlier run left)
    String running = "{\"txId\":\"tx-c\",\"pipeline\":\"undo\",\"status\":\"running\"}";
    cmd("HSET", h.keys.stateH("tx-a"), "updated", "3000", "compensation", running);
    ArchiveBatch next = call("node-a", batch.subList(0, 1), 10);
    assertEquals(0, next.confirmed());
    assertNull(cmd("ZSCORE", h.keys.toArchiveZ(0), "tx-a"), "not due again while its compensation runs");
    cmd("HSET", h.keys.stateH("tx-b"), "compensation", running);
    h.clock.advance(HOLD);
    assertTrue(call("node-a", List.of(), 10).batch().isEmpty(), "not handed out while its compensation runs");
    assertEquals(0L, cmd("ZCARD", h.keys.toArchiveZ(0)).toLong());
    assertEquals(0L, cmd("ZCARD", h.keys.exceptionZ(0)).toLong(), "not an exception: its compensation's end schedules it");
    assertEquals(1L, cmd("EXISTS", h.keys.stateH("tx-a")).toLong());
  }

  @Test
  void a_confirmation_counts_even_from_a_node_that_no_longer_leads() {
    finished("tx-a", h.clock.millis() - 1000, "complete");
    List<ToArchive> batch = call("node-a", List.of(), 10).batch();
    cmd("SET", h.keys.lock1(LeaderRole.ARCHIVE, 0), "node-b");
    ArchiveBatch late = call("node-a", batch, 10);
    assertFalse(late.leader());
    assertEquals(1, late.confirmed());
    assertEquals(0L, cmd("ZCARD", h.keys.toArchiveZ(0)).toLong());
  }

  @Test
  void an_unfinished_transaction_is_never_handed_out_and_a_missing_one_is_dropped_from_the_schedule() {
    long now = h.clock.millis();
    finished("tx-running", now - 1000, "processing");
    cmd("ZADD", h.keys.toArchiveZ(0), Long.toString(now - 1000), "tx-gone");
    assertTrue(call("node-a", List.of(), 10).batch().isEmpty());
    assertEquals(1L, cmd("EXISTS", h.keys.stateH("tx-running")).toLong());
    assertEquals(0L, cmd("ZCARD", h.keys.toArchiveZ(0)).toLong());
    assertEquals(1L, cmd("ZCARD", h.keys.exceptionZ(0)).toLong());
  }

  @Test
  void the_archive_lease_follows_the_two_key_protocol() {
    assertTrue(call("node-a", List.of(), 10).leader());
    long ttl2 = cmd("PTTL", h.keys.lock2(LeaderRole.ARCHIVE, 0)).toLong();
    assertTrue(ttl2 > 60_000 && ttl2 <= 65_000, "lock2 ttl " + ttl2);
    cmd("DEL", h.keys.lock1(LeaderRole.ARCHIVE, 0)); // the lease ran out, the grace has not
    assertFalse(call("node-b", List.of(), 10).leader());
    cmd("DEL", h.keys.lock2(LeaderRole.ARCHIVE, 0));
    assertTrue(call("node-b", List.of(), 10).leader());
    String lock1 = h.keys.lock1(LeaderRole.ARCHIVE, 0);
    assertTrue(lock1.startsWith(h.prefix) && lock1.endsWith("toArchiveLock1"), lock1);
    assertEquals("node-b", cmd("GET", lock1).toString());
  }
}
