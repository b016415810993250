package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.KeyedApi;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A rollout over HTTP (issue 34): PUT with "rollout", GET and POST /api/v1/admin/pipelines/{name}/rollout, and each
 * version's figures (GET .../versions/{version}: started, failed, p99) while a failing canary runs beside the stable.
 */
class RolloutRoutesTest {
  private static final String STABLE = "{'name':'pay','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'util/fixed-reply','params':{'reply':{'ok':true}}}]}";
  private static final String CANARY = "{'name':'pay','nodeGroup':'master','transactionType':true,'steps':["
      + "{'type':'util/fail','params':{'note':'the canary is broken'}}],'rollout':{'share':50}}";
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
        .pipeline("pay", STABLE).start(steps.registry());
  }

  private HttpResponse<String> send(String method, String path, String key, String body) throws Exception {
    return api.send(method, path, key, body == null ? null : body.replace('\'', '"'));
  }

  private JsonObject ok(HttpResponse<String> r) {
    assertEquals(200, r.statusCode(), r.body());
    return new JsonObject(r.body());
  }

  private void refused(int status, String naming, HttpResponse<String> r) {
    assertEquals(status, r.statusCode(), r.body());
    assertTrue(r.body().contains(naming), r.body());
  }

  /** A version's figures (started, ended, failed, p99Ms), as the console reads them. */
  private JsonObject figures(String version) {
    try {
      return ok(send("GET", "/api/v1/pipelines/pay/versions/" + version, "k-ops", null)).getJsonObject("figures");
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void a_failing_canary_shows_its_figures_beside_the_stable_and_a_rollback_sends_every_start_back() throws Exception {
    start();
    String stable = ok(send("GET", "/api/v1/pipelines/pay", "k-ops", null)).getString("version");
    JsonObject put = ok(send("PUT", "/api/v1/pipelines/pay", "k-ops", CANARY));
    String canary = put.getString("version");
    assertEquals(50, put.getJsonObject("rollout").getInteger("share"));
    JsonObject state = ok(send("GET", "/api/v1/admin/pipelines/pay/rollout", "k-ops", null));
    assertEquals(new JsonObject().put("state", "canary").put("version", canary).put("stable", stable).put("share", 50),
        new JsonObject().put("state", state.getString("state")).put("version", state.getString("version"))
            .put("stable", state.getString("stable")).put("share", state.getInteger("share")));
    int failed = 0;
    for (int i = 0; i < 40; i++) {
      failed += node.awaitFinal(node.start("pay", new JsonObject())).status().wire().equals("failed") ? 1 : 0;
    }
    assertTrue(failed > 0 && failed < 40, "both versions took starts: " + failed + " of 40 failed");
    // the node writes its stats counts once a second (StatsTally)
    int ended = 40;
    JsonObject onCanary = Eventually.until(Duration.ofSeconds(10), "the canary's figures", () -> figures(canary),
        f -> f.getInteger("ended") + figures(stable).getInteger("ended") == ended
            && f.getInteger("started") + figures(stable).getInteger("started") == ended);
    JsonObject onStable = figures(stable);
    assertEquals(failed, onCanary.getInteger("started"), onCanary.encode());
    assertEquals(failed, onCanary.getInteger("failed"), onCanary.encode());
    assertEquals(40 - failed, onStable.getInteger("started"), onStable.encode());
    assertEquals(0, onStable.getInteger("failed"), onStable.encode());
    assertTrue(onStable.getLong("p99Ms") != null, onStable.encode());

    JsonObject back = ok(send("POST", "/api/v1/admin/pipelines/pay/rollout", "k-ops", "{'action':'rollback'}"));
    assertEquals("rolledback", back.getString("state"));
    assertEquals(stable, back.getString("version"));
    for (int i = 0; i < 10; i++) {
      assertEquals("success", node.awaitFinal(node.start("pay", new JsonObject())).status().wire());
    }
    refused(409, "no rollout under way", send("POST", "/api/v1/admin/pipelines/pay/rollout", "k-ops",
        "{'action':'promote'}"));
  }

  @Test
  void bad_rollout_input_is_refused_naming_the_field_and_leaves_the_pipeline_as_it_was() throws Exception {
    start();
    String stable = ok(send("GET", "/api/v1/pipelines/pay", "k-ops", null)).getString("version");
    refused(400, "rollout.share", send("PUT", "/api/v1/pipelines/pay", "k-ops", CANARY.replace("50", "100")));
    refused(400, "rollout.share", send("PUT", "/api/v1/pipelines/pay", "k-ops", CANARY.replace("50", "0")));
    refused(400, "unknown field 'percent'", send("PUT", "/api/v1/pipelines/pay", "k-ops",
        CANARY.replace("'share':50", "'percent':50")));
    refused(400, "rollout: pipeline other has no previous version", send("PUT", "/api/v1/pipelines/other", "k-ops",
        CANARY.replace("'pay'", "'other'")));
    refused(400, "node group master", send("PUT", "/api/v1/pipelines/pay", "k-ops",
        CANARY.replace("'master'", "'billing'")));
    assertEquals(stable, ok(send("GET", "/api/v1/pipelines/pay", "k-ops", null)).getString("version"));
    assertEquals("none", ok(send("GET", "/api/v1/admin/pipelines/pay/rollout", "k-ops", null)).getString("state"));
    ok(send("PUT", "/api/v1/pipelines/pay", "k-ops", CANARY));
    refused(400, "action", send("POST", "/api/v1/admin/pipelines/pay/rollout", "k-ops", "{'action':'undo'}"));
    refused(400, "hurry", send("POST", "/api/v1/admin/pipelines/pay/rollout", "k-ops",
        "{'action':'promote','hurry':true}"));
    refused(404, "no pipeline nope", send("GET", "/api/v1/admin/pipelines/nope/rollout", "k-ops", null));
    assertEquals(403, send("POST", "/api/v1/admin/pipelines/pay/rollout", "k-acme", "{'action':'promote'}")
        .statusCode());
    assertEquals("canary", ok(send("GET", "/api/v1/admin/pipelines/pay/rollout", "k-ops", null)).getString("state"));
  }
}
