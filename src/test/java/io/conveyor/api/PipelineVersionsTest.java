package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.KeyedApi;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pipeline's versions for the console (GET /api/v1/pipelines/{name}/versions[/{version}], graph.svg?version=):
 * listed newest first, each drawn with its steps' attempts and p50/p99 from the step histograms complete.lua counts.
 */
class PipelineVersionsTest {
  private static final String V1 = "{'name':'pay','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'util/fixed-reply','params':{'reply':{'a':1}}},{'type':'util/fixed-reply','params':{'reply':{}}}]}";
  private final TestSteps steps = new TestSteps();
  private final KeyedApi api = new KeyedApi();
  private TestNode node;

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
  }

  private void start() {
    node = api.on(new TestNode())
        .pipeline("pay", V1)
        .pipeline("fragile", "{'name':'fragile','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{'prepared':true}}},{'type':'test/broken'}]}")
        .start(steps.registry());
  }

  private HttpResponse<String> send(String method, String path, String key, String body) throws Exception {
    return api.send(method, path, key, body);
  }

  /** get, for a probe (Eventually): a failure to ask is a failure of the test. */
  private JsonObject read(String path) {
    try {
      return get(path);
    } catch (Exception e) {
      throw new IllegalStateException(path, e);
    }
  }

  private JsonObject get(String path) throws Exception {
    HttpResponse<String> r = send("GET", path, "k-ops", null);
    assertEquals(200, r.statusCode(), path + ": " + r.body());
    return new JsonObject(r.body());
  }

  private void run(String pipeline, int n) {
    for (int i = 0; i < n; i++) {
      assertEquals("success", node.awaitFinal(node.start(pipeline, new JsonObject().put("i", i))).status().wire());
    }
  }

  @Test
  void versions_are_listed_newest_first_and_each_is_drawn_with_its_steps_attempts_and_p50_p99() throws Exception {
    start();
    run("pay", 3);
    String v1 = get("/api/v1/pipelines/pay").getString("version");
    JsonObject second = new JsonObject(V1.replace('\'', '"'));
    second.getJsonArray("steps").add(new JsonObject().put("type", "util/fixed-reply")
        .put("params", new JsonObject().put("reply", new JsonObject().put("b", 2))));
    HttpResponse<String> put = send("PUT", "/api/v1/pipelines/pay", "k-ops", second.encode());
    assertEquals(200, put.statusCode(), put.body());
    String v2 = new JsonObject(put.body()).getString("version");
    run("pay", 2);

    JsonObject list = get("/api/v1/pipelines/pay/versions");
    assertEquals(v2, list.getString("current"));
    JsonArray versions = list.getJsonArray("versions");
    assertEquals(2, versions.size(), versions.encode());
    assertEquals(new JsonObject().put("version", v2).put("current", true).put("steps", 3),
        pick(versions.getJsonObject(0), "version", "current", "steps"), "the newest first");
    assertEquals(new JsonObject().put("version", v1).put("current", false).put("steps", 2),
        pick(versions.getJsonObject(1), "version", "current", "steps"));
    assertNotNull(versions.getJsonObject(1).getString("publishedAt"));
    assertEquals(0, list.getInteger("more"));

    // the node writes its stats counts once a second (StatsTally)
    JsonObject old = Eventually.until(Duration.ofSeconds(10), "v1's counts", () -> read("/api/v1/pipelines/pay/versions/"
        + v1), v -> attempts(v.getJsonObject("stepStats")).equals(Map.of("1", 3L, "2", 3L)));
    assertEquals(2, old.getJsonObject("definition").getJsonArray("steps").size());
    assertEquals(false, old.getBoolean("current"));
    assertEquals(Map.of("1", 3L, "2", 3L), attempts(old.getJsonObject("stepStats")), old.encode());
    JsonObject first = old.getJsonObject("stepStats").getJsonObject("1");
    assertTrue(first.getLong("p50Ms") <= first.getLong("p99Ms"), first.encode());
    JsonObject now = Eventually.until(Duration.ofSeconds(10), "v2's counts", () -> read("/api/v1/pipelines/pay/versions/"
        + v2), v -> attempts(v.getJsonObject("stepStats")).equals(Map.of("1", 2L, "2", 2L, "3", 2L)));
    assertEquals(Map.of("1", 2L, "2", 2L, "3", 2L), attempts(now.getJsonObject("stepStats")), now.encode());

    String drawnOld = send("GET", "/api/v1/pipelines/pay/graph.svg?version=" + v1, "k-ops", null).body();
    assertTrue(drawnOld.contains("last hour: 3 attempts · p50 ≤ "), drawnOld);
    assertTrue(drawnOld.contains("version " + v1.substring(0, 12)), drawnOld);
    String drawnNow = send("GET", "/api/v1/pipelines/pay/graph.svg", "k-ops", null).body();
    assertTrue(drawnNow.contains("3 · util/fixed-reply") && drawnNow.contains("last hour: 2 attempts · p50 ≤ "),
        drawnNow);
  }

  @Test
  void a_rerun_counts_its_own_attempts_and_not_those_of_the_run_before_again() throws Exception {
    start();
    String txId = node.start("fragile", new JsonObject());
    assertEquals("failed", node.awaitFinal(txId).status().wire());
    steps.broken.set(false);
    node.transactions.rerun(txId, "acme", false).await();
    assertEquals("success", node.awaitFinal(txId).status().wire());
    String version = get("/api/v1/pipelines/fragile").getString("version");
    JsonObject stats = Eventually.until(Duration.ofSeconds(10), "the rerun's counts", () -> read(
        "/api/v1/pipelines/fragile/versions/" + version).getJsonObject("stepStats"),
        v -> attempts(v).equals(Map.of("1", 1L, "2", 2L)));
    assertEquals(Map.of("1", 1L, "2", 2L), attempts(stats), "step 1 ran once, step 2 in both runs: " + stats);
  }

  @Test
  void a_bad_version_is_400_naming_it_an_unknown_one_404_and_a_client_key_403() throws Exception {
    start();
    HttpResponse<String> bad = send("GET", "/api/v1/pipelines/pay/versions/NOT-HEX", "k-ops", null);
    assertEquals(400, bad.statusCode(), bad.body());
    assertTrue(bad.body().contains("version"), bad.body());
    assertEquals(400, send("GET", "/api/v1/pipelines/pay/graph.svg?version=x%3Cy", "k-ops", null).statusCode());
    assertEquals(404, send("GET", "/api/v1/pipelines/pay/versions/0123456789abcdef", "k-ops", null).statusCode());
    assertEquals(404, send("GET", "/api/v1/pipelines/pay/graph.svg?version=0123456789abcdef", "k-ops", null)
        .statusCode());
    assertEquals(404, send("GET", "/api/v1/pipelines/nope/versions", "k-ops", null).statusCode());
    assertEquals(403, send("GET", "/api/v1/pipelines/pay/versions", "k-acme", null).statusCode());
  }

  @Test
  void p50_and_p99_are_the_bounds_of_the_buckets_that_hold_them() {
    Map<String, Long> counters = new TreeMap<>(Map.of("stepms.ab12.1.5", 60L, "stepms.ab12.1.200", 39L,
        "stepms.ab12.1.inf", 1L, "stepms.ab12.2.inf", 2L, "stepms.ff00.1.5", 7L, "completed", 9L));
    Map<Integer, JsonObject> s = StepStats.of(counters, "ab12");
    assertEquals(new JsonObject().put("attempts", 100L).put("p50Ms", 5L).put("p99Ms", 200L), s.get(1));
    JsonObject slow = s.get(2);
    assertEquals(2L, slow.getLong("attempts"));
    assertNull(slow.getValue("p50Ms"), "above the largest bucket: no bound");
    assertEquals("2 attempts · p50 > 33 min · p99 > 33 min", StepStats.label(slow));
    assertEquals("100 attempts · p50 ≤ 5 ms · p99 ≤ 200 ms", StepStats.label(s.get(1)));
    assertEquals(2, s.size(), "another version's steps are not this one's");
  }

  private static JsonObject pick(JsonObject o, String... fields) {
    JsonObject out = new JsonObject();
    for (String f : fields) {
      out.put(f, o.getValue(f));
    }
    return out;
  }

  private static Map<String, Long> attempts(JsonObject stepStats) {
    Map<String, Long> out = new TreeMap<>();
    stepStats.forEach(e -> out.put(e.getKey(), ((JsonObject) e.getValue()).getLong("attempts")));
    return out;
  }
}
