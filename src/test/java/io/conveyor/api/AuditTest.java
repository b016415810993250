package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.HttpWiring;
import io.conveyor.config.ApiKeyHash;
import io.conveyor.database.AuditQuery;
import io.conveyor.domain.Transactions;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.AuditEntry;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.KeyedApi;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The audit log (README, Audit log): every route that needs an admin key, taken from the router itself so that a new
 * one is walked too, leaves one entry with the key's id, the route as action, its parameters as target and how it
 * ended; refused requests included; reads only with audit.reads.
 */
class AuditTest {
  private static final String PIPELINE = "{\"name\":\"pay\",\"nodeGroup\":\"master\",\"transactionType\":true,"
      + "\"steps\":[{\"type\":\"util/fixed-reply\",\"params\":{\"reply\":{\"ok\":true}}}]}";
  /** A value for each path parameter: things that exist, or harmless ones that do not. */
  private static final Map<String, String> VALUES = Map.of("txId", "tx-0123456789abcdef0123456789abcdef",
      "name", "pay", "group", "nogroup", "owner", "nobody", "id", "nosched", "version", "v0");
  private final KeyedApi api = new KeyedApi();
  private TestNode node;

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
  }

  private List<AuditEntry> entries(String action) {
    return node.node().archive().audit(new AuditQuery(null, null, null, null, action, null, null, null, 1000)).await();
  }

  private List<AuditEntry> awaitEntries(int count) {
    return Eventually.until(Duration.ofSeconds(20), count + " audit entries", () -> entries(null),
        l -> l.size() >= count);
  }

  /** The routes of a router like the node's, each "METHOD /path/:param". */
  private List<String> routes() {
    HttpWiring wiring = new HttpWiring(node.config(), node.node().catalog(), node.node().archive(),
        new NodeMetrics(false), List.of(), () -> "ok");
    HttpApiVerticle verticle = new HttpApiVerticle(node.config().http(), node.config().security().httpTls(),
        node.node().redis(), context -> new Transactions(context, node.node().catalog(), node.config(),
        Future.succeededFuture(node.node().archive()), new NodeMetrics(false)), wiring::on);
    node.node().vertx().deployVerticle(verticle).await();
    List<String> out = new ArrayList<>();
    for (Route r : verticle.router().getRoutes()) {
      if (r.getPath() != null && r.getPath().startsWith("/api/v1/") && r.methods() != null) {
        r.methods().forEach(m -> out.add(m.name() + " " + r.getPath()));
      }
    }
    return out;
  }

  @Test
  void every_admin_route_leaves_one_entry_with_key_action_target_and_outcome() throws Exception {
    node = api.on(new TestNode()).set("AUDIT_READS", "true").pipeline("pay", PIPELINE)
        .start(new TestSteps().registry());
    ApiKeys.Principal admin = new ApiKeys.Principal("ops", List.of("admin"), "");
    Map<String, Integer> sent = new java.util.LinkedHashMap<>();
    Map<String, String> targets = new java.util.HashMap<>();
    for (String route : routes()) {
      String method = route.substring(0, route.indexOf(' '));
      String template = route.substring(route.indexOf(' ') + 1);
      String path = template;
      List<String> target = new ArrayList<>();
      for (String segment : template.split("/")) {
        if (segment.startsWith(":")) {
          target.add(VALUES.get(segment.substring(1)));
          path = path.replace(segment, VALUES.get(segment.substring(1)));
        }
      }
      if (!ApiGate.needsAdmin(path, admin) || sent.containsKey(route)) {
        continue;
      }
      HttpResponse<String> r = api.send(method, path, KeyedApi.ADMIN, method.equals("GET") ? null : "{}");
      sent.put(route, r.statusCode());
      targets.put(route, String.join("/", target));
    }
    assertTrue(sent.size() > 40, "admin routes walked: " + sent.keySet());
    // one refused for its key (a client's) and one for a parameter the route does not take
    assertEquals(403, api.send("POST", "/api/v1/admin/groups/nogroup/pause", KeyedApi.CLIENT, "{}").statusCode());
    assertEquals(400, api.send("GET", "/api/v1/admin/stuck?nope=1", KeyedApi.ADMIN, null).statusCode());
    awaitEntries(sent.size() + 2);
    String opsKey = AuditEntry.keyId(ApiKeyHash.of(KeyedApi.ADMIN));
    for (Map.Entry<String, Integer> s : sent.entrySet()) {
      List<AuditEntry> found = entries(s.getKey()).stream().filter(e -> e.keyId().equals(opsKey)).toList();
      String also = s.getKey().equals("GET /api/v1/admin/stuck") ? " (and the refused one below)" : "";
      AuditEntry e = found.stream().filter(x -> x.status() == s.getValue()).findFirst().orElseThrow(() ->
          new AssertionError(s + ": no entry with its status" + also + " in " + found));
      assertEquals(s.getKey().equals("GET /api/v1/admin/stuck") ? 2 : 1, found.size(), s.getKey());
      assertEquals("ops", e.owner(), s.getKey());
      assertEquals(targets.get(s.getKey()), e.target(), s.getKey());
      assertEquals(AuditEntry.outcome(s.getValue()), e.outcome(), s.getKey());
      assertEquals("http", e.via());
      assertEquals("127.0.0.1", e.remote());
    }
    AuditEntry forbidden = entries("POST /api/v1/admin/groups/:group/pause").stream()
        .filter(e -> e.status() == 403).findFirst().orElseThrow();
    assertEquals(AuditEntry.keyId(ApiKeyHash.of(KeyedApi.CLIENT)), forbidden.keyId());
    assertEquals("acme", forbidden.owner());
    assertEquals("refused", forbidden.outcome());
    assertEquals("forbidden", forbidden.error());
    AuditEntry badQuery = entries("GET /api/v1/admin/stuck").stream().filter(e -> e.status() == 400).findFirst()
        .orElseThrow();
    assertEquals("invalid-input", badQuery.error());
    assertEquals(new JsonObject().put("nope", "1"), badQuery.params().getJsonObject("query"));
  }

  @Test
  void a_client_key_hammering_an_admin_route_leaves_at_most_the_budget_of_refusals_a_minute() throws Exception {
    node = api.on(new TestNode()).pipeline("pay", PIPELINE).start(new TestSteps().registry());
    int sent = RefusalBudget.PER_MINUTE + 15;
    for (int i = 0; i < sent; i++) {
      assertEquals(403, api.send("POST", "/api/v1/admin/groups/nogroup/pause", KeyedApi.CLIENT, "{}").statusCode());
    }
    // an admin's act after them is recorded all the same
    api.send("POST", "/api/v1/admin/groups/nogroup/resume", KeyedApi.ADMIN, "{}");
    Eventually.until(Duration.ofSeconds(20), "the admin's act", () -> entries("POST /api/v1/admin/groups/:group/resume"),
        l -> !l.isEmpty());
    long refused = entries("POST /api/v1/admin/groups/:group/pause").stream()
        .filter(e -> e.keyId().equals(AuditEntry.keyId(ApiKeyHash.of(KeyedApi.CLIENT)))).count();
    assertTrue(refused <= RefusalBudget.PER_MINUTE && refused > 0, refused + " of " + sent + " refusals recorded");
  }

  @Test
  void without_audit_reads_only_acts_are_recorded_and_each_is_an_admin_event_too() throws Exception {
    node = api.on(new TestNode()).pipeline("pay", PIPELINE).start(new TestSteps().registry());
    assertEquals(200, api.send("GET", "/api/v1/admin/owners", KeyedApi.ADMIN, null).statusCode());
    HttpResponse<String> put = api.send("PUT", "/api/v1/pipelines/pay", KeyedApi.ADMIN, PIPELINE);
    assertEquals(200, put.statusCode(), put.body());
    AuditEntry e = awaitEntries(1).get(0);
    assertEquals("PUT /api/v1/pipelines/:name", e.action());
    assertEquals("pay", e.target());
    assertEquals("ok", e.outcome());
    assertEquals(PIPELINE.length(), e.params().getInteger("bodyBytes"));
    assertEquals(List.of("name", "nodeGroup", "steps", "transactionType"), e.params().getJsonArray("bodyFields")
        .getList());
    assertFalse(e.params().encode().contains("fixed-reply"), "no payload: " + e.params());
    assertEquals(1, entries(null).size(), "the GET left none");
    JsonObject events = new JsonObject(Eventually.until(Duration.ofSeconds(10), "the admin event",
        () -> {
          try {
            return api.send("GET", "/api/v1/admin/events?kind=admin", KeyedApi.ADMIN, null).body();
          } catch (Exception x) {
            throw new IllegalStateException(x);
          }
        }, b -> b.contains("PUT /api/v1/pipelines/:name")));
    JsonObject event = events.getJsonArray("events").getJsonObject(0);
    assertEquals("PUT /api/v1/pipelines/:name", event.getString("subject"));
    assertEquals(e.keyId(), event.getJsonObject("details").getString("keyId"));
    JsonObject listed = new JsonObject(api.send("GET", "/api/v1/admin/audit?action=PUT%20/api/v1/pipelines/:name"
        + "&outcome=ok&limit=10", KeyedApi.ADMIN, null).body());
    assertEquals(1, listed.getJsonArray("entries").size(), listed.encode());
    assertEquals(400, api.send("GET", "/api/v1/admin/audit?outcome=maybe", KeyedApi.ADMIN, null).statusCode());
  }
}
