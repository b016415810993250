package io.conveyor.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.config.Config;
import io.conveyor.database.ArchiveStore;
import io.conveyor.database.AuditQuery;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.AuditEntry;
import io.conveyor.redis.AdminEvents;
import io.conveyor.redis.Keys;
import io.conveyor.redis.RedisLink;
import io.conveyor.redis.Scripts;
import io.conveyor.redis.StoreContext;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestRedis;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The audit drain on PostgreSQL: a bad entry is set aside, not a stall, and an entry written twice is one row. */
class AuditDrainTest {
  private final String prefix = TestRedis.newPrefix();
  private final String table = TestDatabase.newTable();
  private Vertx vertx;
  private RedisLink link;
  private StoreContext redis;
  private ArchiveStore archive;

  @BeforeEach
  void open() {
    vertx = Vertx.vertx();
    link = new RedisLink(vertx, TestRedis.options(1000));
    redis = new StoreContext(link, new Keys(prefix, TestRedis.partitions()), new Scripts(), Clock.systemUTC());
    redis.scripts().loadAll(link).await();
    archive = ArchiveStore.forConfig(vertx, new Config.Archive(TestDatabase.url(), Duration.ZERO,
        Duration.ofSeconds(2), Duration.ofSeconds(1), 100, Duration.ofSeconds(1), Duration.ofSeconds(30),
        Duration.ofSeconds(30), table), Config.ArchiveTls.DISABLED);
    archive.open().await();
  }

  @AfterEach
  void close() {
    archive.close().await();
    link.close().await();
    vertx.close().await();
    TestRedis.drop(prefix);
    TestDatabase.drop(table);
  }

  private void log(String keyId, String error) {
    AuditEntry e = new AuditEntry(0, System.currentTimeMillis(), keyId, "ops", "POST /x", "orders", "refused", 400,
        error, "127.0.0.1", "http", "node-1", new JsonObject());
    AdminEvents.log(redis, e.at(), "node-1", e.action(), e.toJson().encode(), 1000).await();
  }

  private List<AuditEntry> stored() {
    return archive.audit(new AuditQuery(null, null, null, null, null, null, null, null, 100)).await();
  }

  /** One drain pass on a context of its own, as the archive leader runs it; waits until auditX is empty. */
  private void drain() {
    AuditDrain drain = new AuditDrain(redis, archive, new NodeMetrics(false), () -> true);
    vertx.getOrCreateContext().runOnContext(v -> drain.pass(true));
    Eventually.until(Duration.ofSeconds(20), "auditX drained", () -> AdminEvents.waiting(redis, 10).await(),
        List::isEmpty);
  }

  @Test
  void an_entry_the_database_refuses_alone_is_set_aside_and_the_others_are_stored_cut_to_their_columns() {
    log("first", "invalid-input");
    log("k".repeat(100), "e".repeat(400)); // longer than the columns: cut to fit, not refused
    log("bad", "a NUL\u0000 PostgreSQL text cannot hold");
    TestRedis.cmd("XADD", AdminEvents.auditX(redis.keys()), "*", "e", "{not an entry");
    log("last", "invalid-input");
    drain();
    List<AuditEntry> rows = stored();
    assertEquals(List.of("last", "k".repeat(63) + "…", "first"), rows.stream().map(AuditEntry::keyId).toList());
    assertEquals(256, rows.get(1).error().length());
  }

  @Test
  void entries_written_again_after_a_leader_died_before_dropping_them_are_stored_once() {
    log("a", null);
    log("b", null);
    List<AdminEvents.Waiting> waiting = AdminEvents.waiting(redis, 10).await();
    // the leader that died: it wrote them and never dropped them from auditX
    archive.appendAudit(waiting.stream().map(w -> AuditEntry.fromJson(new JsonObject(w.json()))).toList(),
        waiting.stream().map(AdminEvents.Waiting::id).toList()).await();
    drain();
    assertEquals(List.of("b", "a"), stored().stream().map(AuditEntry::keyId).toList());
  }
}
