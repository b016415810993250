package io.conveyor.api;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.redis.ArchiveHandoff.ToArchive;
import io.conveyor.redis.QuarantineStore.Refused;
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
  private TestNode node;
  private String base;

  @BeforeEach
  void startNode() {
    int port = TestRedis.freePort();
    base = "http://127.0.0.1:" + port;
    node = new TestNode().set("HTTP_PORT", Integer.toString(port)).set("API_KEYS", "acme:client:k-acme,ops:admin:k-ops")
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
    assertTrue(cmd("LRANGE", node.keys.eventsL(p), 0, 0).toString().contains("archive-retried"));
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
    String event = cmd("LRANGE", node.keys.eventsL(p), 0, 0).toString();
    assertTrue(event.contains("archive-dropped") && event.contains("ops"), event);
    assertEquals(400, call("DELETE", "/api/v1/admin/archive/quarantine/not-a-tx", "k-ops").status());
  }
}
