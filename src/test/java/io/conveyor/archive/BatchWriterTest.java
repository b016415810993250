package io.conveyor.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.config.Config;
import io.conveyor.database.ArchiveStore;
import io.conveyor.model.Ids;
import io.conveyor.redis.ArchiveHandoff.ToArchive;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Splitting a refused batch on a real (H2) archive: bad rows apart, outages whole. */
class BatchWriterTest {
  private static final String TABLE = "conveyor_transactions";
  private Vertx vertx;
  private Path file;
  private ArchiveStore store;
  private BatchWriter writer;

  @BeforeEach
  void open() throws Exception {
    vertx = Vertx.vertx();
    file = Files.createTempDirectory("batch-writer").resolve("archive");
    store = ArchiveStore.forConfig(vertx, new Config.Archive("h2:" + file, Duration.ZERO, Duration.ofSeconds(2),
        Duration.ofSeconds(1), 100, Duration.ofSeconds(1), Duration.ofSeconds(30), Duration.ofSeconds(30), TABLE), Config.ArchiveTls.DISABLED);
    store.open().await();
    writer = new BatchWriter(store, Duration.ofSeconds(30));
  }

  @AfterEach
  void close() {
    store.close().await();
    vertx.close().await();
  }

  private void sql(String statement) throws Exception {
    try (var c = DriverManager.getConnection("jdbc:h2:file:" + file.toAbsolutePath() + ";AUTO_SERVER=TRUE", "sa", "");
         var s = c.createStatement()) {
      s.execute(statement);
    }
  }

  private static ToArchive tx(String status) {
    JsonObject state = new JsonObject().put("owner", "acme").put("type", "order").put("status", status)
        .put("processingState", "complete").put("created", "1800000000000").put("updated", "1800000000005")
        .put("completed", "1800000000005");
    return new ToArchive(Ids.txId(), "1800000000005/0", state);
  }

  private static List<ToArchive> batch(int ok, String bad, int at) {
    List<ToArchive> b = new ArrayList<>();
    for (int i = 0; i < ok; i++) {
      b.add(tx("success"));
    }
    b.add(at, tx(bad));
    return b;
  }

  @Test
  void the_one_row_the_database_refuses_is_found_and_the_rest_written() throws Exception {
    sql("ALTER TABLE " + TABLE + " ADD CONSTRAINT no_poison CHECK (status <> 'poison')");
    List<ToArchive> b = batch(99, "poison", 57);
    BatchWriter.Outcome o = writer.write(b).await();
    assertEquals(99, o.written().size());
    assertEquals(List.of(b.get(57).txId()), o.refused().stream().map(r -> r.tx().txId()).toList());
    assertTrue(o.refused().get(0).sqlState().startsWith("23"), o.refused().get(0).sqlState());
    for (ToArchive t : o.written()) {
      assertEquals(t.txId(), store.find(t.txId()).await().txId());
    }
  }

  @Test
  void a_row_whose_state_is_unreadable_is_refused_without_asking_the_database() {
    ToArchive unreadable = new ToArchive(Ids.txId(), "x/0", new JsonObject().put("owner", "acme"));
    List<ToArchive> b = new ArrayList<>(batch(2, "success", 0));
    b.add(unreadable);
    BatchWriter.Outcome o = writer.write(b).await();
    assertEquals(3, o.written().size());
    assertEquals(unreadable, o.refused().get(0).tx());
    assertTrue(o.refused().get(0).message().contains("unreadable"), o.refused().get(0).message());
  }

  @Test
  void an_archive_that_refuses_every_row_alone_is_an_outage_and_sets_nothing_aside() throws Exception {
    sql("ALTER TABLE " + TABLE + " ADD CONSTRAINT nothing CHECK (status = 'never')");
    var e = assertThrows(IllegalStateException.class, () -> writer.write(batch(4, "success", 0)).await());
    assertTrue(e.getMessage().contains("every one of 5"), e.getMessage());
  }

  @Test
  void a_missing_table_is_an_outage_not_a_bad_row() throws Exception {
    sql("DROP TABLE " + TABLE);
    var e = assertThrows(java.sql.SQLException.class, () -> writer.write(batch(0, "success", 0)).await());
    assertTrue(e.getSQLState().startsWith("42"), e.getSQLState());
  }
}
