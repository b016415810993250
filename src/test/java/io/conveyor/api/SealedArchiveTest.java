package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.domain.Transactions;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.KeyedApi;
import io.conveyor.testing.TestDatabase;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgConnectOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The PostgreSQL archive of an encrypted owner's transactions: its rows and a pg_dump of them hold no marker and no
 * data key; after the owner's key is shredded, the archived transaction reads as sealed, and the dump taken before
 * holds nothing that opens it.
 */
class SealedArchiveTest {
  private static final String MARKER = "MARKER-5500-0000";
  private final String table = TestDatabase.newTable();

  @AfterEach
  void drop() {
    TestDatabase.drop(table);
  }

  private String pgDump() throws IOException, InterruptedException {
    PgConnectOptions o = PgConnectOptions.fromUri(TestDatabase.url());
    Process p = new ProcessBuilder("pg_dump", "-h", o.getHost(), "-p", Integer.toString(o.getPort()), "-U",
        o.getUser(), "-d", o.getDatabase(), "-t", table, "--data-only").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), out);
    return out;
  }

  @Test
  void archived_rows_and_a_pg_dump_hold_no_marker_and_after_a_shred_the_row_reads_as_sealed() throws Exception {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    KeyedApi api = new KeyedApi();
    try (TestNode node = api.on(new TestNode()).set("SECURITY_ENCRYPTION_OWNERS", "acme")
        .set("SECURITY_ENCRYPTION_SEARCHABLE_METADATA", "orderId")
        .set("SECURITY_ENCRYPTION_MASTER_KEY", "base64:" + Base64.getEncoder().encodeToString(key))
        .set("ARCHIVE_URL", TestDatabase.url()).set("ARCHIVE_TABLE", table).set("ARCHIVE_DELAY", "0s")
        .set("ARCHIVE_INTERVAL", "50ms")
        .pipeline("echo", "{'name':'echo','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'test/record'}]}")
        .start(new TestSteps().registry())) {
      Transactions tx = node.nodeTransactions();
      String txId = tx.start(new JsonObject().put("type", "echo").put("owner", "acme")
          .put("input", new JsonObject().put("card", MARKER))
          .put("metadata", new JsonObject().put("ref", MARKER).put("orderId", "ORD-88"))).await().txId();
      Eventually.until(Duration.ofSeconds(15), txId + " in the archive and gone from Redis",
          () -> TestRedis.cmd("EXISTS", node.keys.stateH(txId)).toInteger() == 0
              && ((Number) TestDatabase.query("SELECT count(*) FROM " + table)).longValue() == 1, done -> done);

      String row = (String) TestDatabase.query("SELECT t::text FROM " + table + " t");
      assertFalse(row.contains(MARKER), row);
      assertTrue(row.contains("sealed:v1:"), row);
      String dump = pgDump();
      assertTrue(dump.contains(txId), "the dump holds the row");
      assertFalse(dump.contains(MARKER), "the dump holds the marker in clear");
      String wrapped = TestRedis.cmd("HGET", new io.conveyor.redis.DataKeyStore(node.store.context).dataKeysH(),
          "k:acme").toString().split(":", 3)[2];
      assertFalse(dump.contains(wrapped), "the dump holds acme's data key");
      String sealedText = new JsonObject((String) TestDatabase.query("SELECT state->>'metadata' FROM " + table))
          .getString("$sealed");
      for (String q : java.util.List.of("ord-88", sealedText.substring(sealedText.length() - 12,
          sealedText.length() - 4))) {
        String found = api.send("GET", "/api/v1/transactions?q=" + java.net.URLEncoder.encode(q,
            StandardCharsets.UTF_8), KeyedApi.CLIENT, null).body();
        assertEquals(q.equals("ord-88"), found.contains(txId), "the archive's search for " + q + ": " + found);
      }
      JsonObject read = new JsonObject(api.send("GET", "/api/v1/transactions/" + txId, KeyedApi.CLIENT, null).body());
      assertEquals(MARKER, read.getJsonObject("output").getString("card"), "opened from the archive: " + read);

      assertEquals(200, api.send("DELETE", "/api/v1/admin/owners/acme/data-key", KeyedApi.ADMIN, null).statusCode());
      JsonObject after = Eventually.until(Duration.ofSeconds(5), "the archived transaction to read as sealed", () -> {
        try {
          return new JsonObject(api.send("GET", "/api/v1/transactions/" + txId, KeyedApi.CLIENT, null).body());
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, j -> j.getBoolean("sealed", false));
      assertFalse(after.encode().contains(MARKER), after.encode());
      assertEquals(null, after.getValue("metadata"));
      assertEquals(row, TestDatabase.query("SELECT t::text FROM " + table + " t"), "the row itself is untouched");
    }
  }
}
