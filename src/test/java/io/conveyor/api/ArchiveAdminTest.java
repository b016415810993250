package io.conveyor.api;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.redis.ArchiveHandoff.ToArchive;
import io.conveyor.redis.QuarantineStore.Refused;
import io.conveyor.testing.MutableClock;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The archive's quarantine through the admin API: list, retry, drop. */
class ArchiveAdminTest {
  private final HttpClient http = HttpClient.newHttpClient();
  private final MutableClock clock = new MutableClock(System.currentTimeMillis());
  private TestNode node;
  private String base;

  // no archive leader: a retried entry is due at once, and a leader would archive it (and take it from toArchiveZ)
  // within its next round, racing the checks of what the retry left; the lag test needs the entry to wait too
  @BeforeEach
  void startNode() {
    int port = TestRedis.freePort();
    base = "http://127.0.0.1:" + port;
    node = new TestNode().clock(clock).set("ARCHIVE_LAG_WARNING", "5m").set("NODE_ROLES", "dequeue,api").set("HTTP_PORT", Integer.toString(port)).set("API_KEYS", "acme:client:k-acme,ops:admin:k-ops")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}")
        .start(new TestSteps().registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private record Reply(int status, JsonObject body) {
  }

  private String text(String path) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create(base + path)).build(), HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private Reply call(String method, String path, String key) {
    HttpRequest r = HttpRequest.newBuilder(URI.create(base + path)).method(method, HttpRequest.BodyPublishers.noBody())
        .header("Authorization", "Bearer " + key).build();
    try {
      HttpResponse<String> a = http.send(r, HttpResponse.BodyHandlers.ofString());
      return new Reply(a.statusCode(), new JsonObject(a.body()));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** A finished transaction, set aside as the archive leader does when the database refuses it alone. */
  private String quarantined(String message) {
    String txId = node.start("order", new JsonObject());
    node.awaitFinal(txId);
    var stamp = cmd("HMGET", node.keys.stateH(txId), "updated", "rev");
    String handed = stamp.get(0) + "/" + (stamp.get(1) == null ? "0" : stamp.get(1).toString());
    int n = node.store.quarantine.setAside(node.keys.partitionOf(txId), "node-test", List.of(new Refused(
        new ToArchive(txId, handed, new JsonObject()), message, "22001"))).await();
    assertEquals(1, n);
    return txId;
  }

  @Test
  void an_admin_lists_the_quarantined_with_the_databases_message_and_a_client_may_not() {
    String txId = quarantined("value too long for type character varying(64)");
    Reply list = call("GET", "/api/v1/admin/archive/quarantine", "k-ops");
    assertEquals(200, list.status(), list.body().encode());
    JsonObject item = list.body().getJsonArray("quarantined").getJsonObject(0);
    assertEquals(txId, item.getString("txId"));
    assertEquals("value too long for type character varying(64)", item.getString("message"));
    assertEquals("22001", item.getString("sqlState"));
    assertNull(list.body().getString("next"));
    assertEquals(403, call("GET", "/api/v1/admin/archive/quarantine", "k-acme").status());
    Reply bad = call("GET", "/api/v1/admin/archive/quarantine?limit=0", "k-ops");
    assertEquals(400, bad.status());
    assertTrue(bad.body().getString("detail").contains("1000"), bad.body().encode());
  }

  @Test
  void retry_makes_it_due_at_once_and_a_second_retry_is_not_found() {
    String txId = quarantined("refused");
    int p = node.keys.partitionOf(txId);
    assertNull(cmd("ZSCORE", node.keys.toArchiveZ(p), txId));
    Reply retry = call("POST", "/api/v1/admin/archive/quarantine/" + txId + "/retry", "k-ops");
    assertEquals(200, retry.status(), retry.body().encode());
    assertEquals("due", retry.body().getString("result"));
    assertNotNull(cmd("ZSCORE", node.keys.toArchiveZ(p), txId));
    assertNull(cmd("ZSCORE", node.keys.exceptionZ(p), txId));
    assertTrue(lastEvent(p).contains("archive-retried"));
    Reply again = call("POST", "/api/v1/admin/archive/quarantine/" + txId + "/retry", "k-ops");
    assertEquals(404, again.status());
    assertEquals("not-found", again.body().getString("type").replaceAll(".*/", ""));
  }

  @Test
  void drop_deletes_it_from_redis_with_an_event_naming_who() {
    String txId = quarantined("refused");
    int p = node.keys.partitionOf(txId);
    Reply drop = call("DELETE", "/api/v1/admin/archive/quarantine/" + txId, "k-ops");
    assertEquals(200, drop.status(), drop.body().encode());
    assertEquals(0, cmd("EXISTS", node.keys.stateH(txId)).toLong());
    String event = lastEvent(p);
    assertTrue(event.contains("archive-dropped") && event.contains("ops"), event);
    assertEquals(400, call("DELETE", "/api/v1/admin/archive/quarantine/not-a-tx", "k-ops").status());
  }

  @Test
  void an_archive_whose_oldest_due_entry_waited_past_the_warning_is_lagging_and_the_node_stays_ready() {
    int p = node.keys.partitionOf(io.conveyor.model.Ids.txId());
    cmd("ZADD", node.keys.toArchiveZ(p), clock.millis(), io.conveyor.model.Ids.txId());
    clock.advance(java.time.Duration.ofMinutes(4));
    assertEquals("ok", call("GET", "/health/ready", "k-ops").body().getString("archive"));
    assertEquals(false, call("GET", "/api/v1/admin/archive", "k-ops").body().getBoolean("lagging"));
    clock.advance(java.time.Duration.ofMinutes(3));
    Reply ready = call("GET", "/health/ready", "k-ops");
    assertEquals(200, ready.status(), ready.body().encode());
    assertEquals("ready", ready.body().getString("status"));
    assertTrue(ready.body().getString("archive").startsWith("lagging: ") && ready.body().getString("archive")
        .contains("7m") && ready.body().getString("archive").contains("archive.lagWarning 5m"), ready.body().encode());
    JsonObject view = call("GET", "/api/v1/admin/archive", "k-ops").body();
    assertEquals(true, view.getBoolean("lagging"));
    assertEquals(420.0, view.getDouble("lagSeconds"), 1.0);
    assertEquals(300, view.getLong("lagWarningSeconds"));
    assertEquals(0, view.getLong("quarantined"));
    assertTrue(text("/metrics").contains("conveyor_archive_lag_seconds 420"), "the gauge follows the lag");
  }

  /** The newest event of the partition but the admin events (the audit of each request, README "Audit log"). */
  private String lastEvent(int p) {
    for (var e : cmd("LRANGE", node.keys.eventsL(p), 0, -1)) {
      if (!e.toString().contains("\"kind\":\"admin\"")) {
        return e.toString();
      }
    }
    return "";
  }
}
