package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.domain.Transactions;
import io.conveyor.model.TxSummary;
import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepResult;
import io.conveyor.pipeline.StepType;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Encryption at rest on a running node (security.encryption.owners): an encrypted owner's input, metadata, step
 * outputs, errors' messages and output reach Redis only sealed, while its steps get them in clear and its reads
 * (status, the admin detail) show them in clear; an owner without encryption is stored as before.
 */
class SealedPayloadsTest {
  private static final String MARKER = "MARKER-4111-1111";

  /** Fails its first attempt with a message naming the input's card, then answers it in its output. */
  private static StepType probe() {
    return new StepType() {
      @Override
      public String name() {
        return "test/card-probe";
      }

      @Override
      public Step create(JsonObject params) {
        return ctx -> Future.succeededFuture(ctx.stepAttempt() == 1
            ? new StepResult.Failed("card " + ctx.input().getString("card") + " declined", null)
            : StepResult.success(new JsonObject().put("charged", ctx.input().getString("card"))));
      }
    };
  }

  private static TestNode node(TestSteps steps) {
    return node(steps, "1h");
  }

  private static TestNode node(TestSteps steps, String archiveDelay) {
    return unstarted(archiveDelay).start(steps.registry().register(probe()));
  }

  private static TestNode unstarted(String archiveDelay) {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    return new TestNode().set("SECURITY_ENCRYPTION_OWNERS", "acme").set("SECURITY_ENCRYPTION_SEARCHABLE_METADATA", "orderId")
        .set("SECURITY_ENCRYPTION_MASTER_KEY", "base64:" + Base64.getEncoder().encodeToString(key))
        .set("ARCHIVE_DELAY", archiveDelay).set("ARCHIVE_INTERVAL", "50ms")
        .pipeline("each", "{'name':'each','nodeGroup':'master','steps':[{'type':'test/record'}]}")
        .pipeline("tree", "{'name':'tree','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/child-pipeline','params':{'pipeline':'each'}},"
            + "{'type':'flow/parallel','params':{'branches':[{'pipeline':'each'},{'pipeline':'each'}]}}]}")
        .pipeline("undo", "{'name':'undo','nodeGroup':'master','steps':[{'type':'test/record'}]}")
        .pipeline("failing", "{'name':'failing','nodeGroup':'master','transactionType':true,'onFailure':'undo',"
            + "'steps':[{'type':'test/card-probe'}]}")
        .pipeline("charge", "{'name':'charge','nodeGroup':'master','transactionType':true,"
            + "'retry':{'maxAttempts':2,'initialInterval':'20ms','maxInterval':'20ms'},"
            + "'steps':[{'type':'test/record'},{'type':'test/card-probe'}]}");
  }

  private static JsonObject body(String owner) {
    return new JsonObject().put("type", "charge").put("owner", owner)
        .put("input", new JsonObject().put("card", MARKER)).put("metadata", new JsonObject().put("ref", MARKER));
  }

  /** Every value of every key under the prefix, as text. */
  private static List<String> everything(String prefix) {
    List<String> out = new ArrayList<>();
    for (String key : TestRedis.keys(prefix)) {
      String type = TestRedis.cmd("TYPE", key).toString();
      Response r = switch (type) {
        case "hash" -> TestRedis.cmd("HGETALL", key);
        case "list" -> TestRedis.cmd("LRANGE", key, 0, -1);
        case "zset" -> TestRedis.cmd("ZRANGE", key, 0, -1);
        case "set" -> TestRedis.cmd("SMEMBERS", key);
        case "string" -> TestRedis.cmd("GET", key);
        default -> null;
      };
      out.add(key + " = " + r);
    }
    return out;
  }

  @Test
  void an_encrypted_owners_transaction_runs_and_reads_in_clear_while_redis_holds_no_marker() {
    TestSteps steps = new TestSteps();
    try (TestNode node = node(steps)) {
      Transactions tx = node.nodeTransactions();
      String txId = tx.start(body("acme")).await().txId();
      node.awaitFinal(txId);
      List<String> all = everything(node.prefix);
      assertTrue(all.stream().anyMatch(v -> v.contains("stateH:" + txId) && v.contains("sealed:v1:")), "" + all);
      for (String value : all) {
        assertFalse(value.contains(MARKER), "Redis holds the marker in clear: " + value);
      }
      String state = TestRedis.cmd("HGET", node.keys.stateH(txId), "input").toString();
      assertTrue(state.contains("\"$sealed\":\"sealed:v1:1:"), state);

      assertEquals(MARKER, steps.recorded.get(0).getJsonObject("input").getString("card"), "the step got it in clear");
      TxSummary s = tx.status(txId, "acme").await();
      assertEquals("success", s.status().wire());
      assertEquals(MARKER, s.output().getString("charged"));
      assertEquals(MARKER, s.metadata().getString("ref"));
      assertEquals("card " + MARKER + " declined", s.errors().getJsonObject(0).getString("message"));
      JsonObject detail = AdminApi.of(tx, null).detail(txId).await();
      assertEquals(MARKER, detail.getJsonObject("input").getString("card"), detail.encode());
      assertTrue(detail.getJsonObject("summary").encode().contains(MARKER));
    }
  }

  @Test
  void a_child_pipeline_and_parallel_branches_of_an_encrypted_owner_get_and_give_back_their_payloads_in_clear() {
    TestSteps steps = new TestSteps();
    try (TestNode node = node(steps)) {
      Transactions tx = node.nodeTransactions();
      String txId = tx.start(body("acme").put("type", "tree")).await().txId();
      node.awaitFinal(txId);
      for (String value : everything(node.prefix)) {
        assertFalse(value.contains(MARKER), "Redis holds the marker in clear: " + value);
      }
      TxSummary s = tx.status(txId, "acme").await();
      assertEquals("success", s.status().wire(), String.valueOf(s.note()));
      assertEquals(3, steps.recorded.size(), "the child and both branches ran");
      steps.recorded.forEach(r -> assertEquals(MARKER, r.getJsonObject("input").getString("card"), r.encode()));
      JsonObject out = s.output();
      assertEquals(MARKER, out.getJsonArray("outputs").getJsonObject(1).getString("card"), out.encode());
    }
  }

  @Test
  void the_archive_keeps_the_sealed_payloads_as_they_are_and_reads_from_it_open_them() {
    TestSteps steps = new TestSteps();
    try (TestNode node = node(steps, "0s")) {
      Transactions tx = node.nodeTransactions();
      String txId = tx.start(body("acme")).await().txId();
      io.conveyor.database.ArchivedTx row = io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10),
          txId + " to be archived", () -> TestRedis.cmd("EXISTS", node.keys.stateH(txId)).toInteger() == 0
              ? node.node().archive().find(txId).await() : null, java.util.Objects::nonNull);
      assertFalse(row.state().encode().contains(MARKER), row.state().encode());
      assertTrue(row.state().getString("output").contains("sealed:v1:"), row.state().encode());
      TxSummary s = tx.status(txId, "acme").await();
      assertEquals(MARKER, s.output().getString("charged"));
      assertEquals("card " + MARKER + " declined", s.errors().getJsonObject(0).getString("message"));
      JsonObject detail = AdminApi.of(tx, node.node().archive()).detail(txId).await();
      assertEquals(MARKER, detail.getJsonObject("input").getString("card"), detail.encode());
    }
  }

  @Test
  void the_completion_webhook_of_an_encrypted_owner_posts_its_payloads_in_clear() {
    TestSteps steps = new TestSteps();
    String secret = "whsec_" + Base64.getEncoder().encodeToString("a-test-secret-of-32-bytes-length".getBytes());
    try (io.conveyor.testing.WebhookReceiver receiver = new io.conveyor.testing.WebhookReceiver(secret);
         TestNode node = unstarted("1h").set("WEBHOOKS_SECRET", secret).set("WEBHOOKS_ALLOW_HOSTS", "127.0.0.1")
             .set("WEBHOOKS_INTERVAL", "20ms").set("WEBHOOKS_INITIAL_DELAY", "100ms")
             .start(steps.registry().register(probe()))) {
      Transactions tx = node.nodeTransactions();
      String txId = tx.start(body("acme").put("webhook", receiver.url("/hook"))).await().txId();
      io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(15), "the webhook of " + txId,
          () -> receiver.of(txId).size(), n -> n >= 1);
      JsonObject posted = receiver.of(txId).get(0).json();
      assertTrue(receiver.of(txId).get(0).verified());
      assertEquals(MARKER, posted.getJsonObject("output").getString("charged"), posted.encode());
      assertEquals(MARKER, posted.getJsonObject("metadata").getString("ref"), posted.encode());
      for (String value : everything(node.prefix)) {
        assertFalse(value.contains(MARKER), "Redis holds the marker in clear: " + value);
      }
    }
  }

  @Test
  void after_its_data_key_is_shredded_an_owners_transactions_read_as_sealed_with_no_payload_and_new_ones_run()
      throws Exception {
    TestSteps steps = new TestSteps();
    io.conveyor.testing.KeyedApi api = new io.conveyor.testing.KeyedApi();
    try (TestNode node = api.on(unstarted("1h")).start(steps.registry().register(probe()))) {
      String started = api.send("POST", "/api/v1/transactions", io.conveyor.testing.KeyedApi.CLIENT,
          body("acme").encode()).body();
      String txId = new JsonObject(started).getString("txId");
      node.awaitFinal(txId);
      String path = "/api/v1/transactions/" + txId;
      assertTrue(api.send("GET", path, io.conveyor.testing.KeyedApi.CLIENT, null).body().contains(MARKER),
          "read in clear, and the node's cache holds acme's key now");

      var rewrap = api.send("POST", "/api/v1/admin/data-keys/rewrap", io.conveyor.testing.KeyedApi.ADMIN, null);
      assertEquals(200, rewrap.statusCode(), rewrap.body());
      assertEquals(1, new JsonObject(rewrap.body()).getInteger("current"), "acme's key is under the master key: "
          + rewrap.body());
      var shred = api.send("DELETE", "/api/v1/admin/owners/acme/data-key", io.conveyor.testing.KeyedApi.ADMIN, null);
      assertEquals(200, shred.statusCode(), shred.body());
      assertEquals(new JsonObject().put("owner", "acme").put("shredded", true), new JsonObject(shred.body()));
      String dataKeys = new io.conveyor.redis.DataKeyStore(node.store.context).dataKeysH();
      assertEquals(null, TestRedis.cmd("HGET", dataKeys, "k:acme"));
      JsonObject after = io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(5),
          "the node to drop its cached key", () -> {
            try {
              return new JsonObject(api.send("GET", path, io.conveyor.testing.KeyedApi.CLIENT, null).body());
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          }, j -> j.getBoolean("sealed", false));
      assertFalse(after.encode().contains(MARKER), after.encode());
      assertFalse(after.encode().contains("sealed:v1"), "no sealed text either: " + after.encode());
      assertEquals("success", after.getString("status"));
      assertEquals(null, after.getValue("output"));
      for (String value : everything(node.prefix)) {
        assertFalse(value.contains(MARKER), "Redis holds the marker in clear: " + value);
      }

      String again = new JsonObject(api.send("POST", "/api/v1/transactions", io.conveyor.testing.KeyedApi.CLIENT,
          body("acme").encode()).body()).getString("txId");
      node.awaitFinal(again);
      JsonObject fresh = new JsonObject(api.send("GET", "/api/v1/transactions/" + again,
          io.conveyor.testing.KeyedApi.CLIENT, null).body());
      assertEquals(MARKER, fresh.getJsonObject("output").getString("charged"), fresh.encode());
      assertTrue(TestRedis.cmd("HGET", dataKeys, "k:acme").toString().startsWith("2:"), "a new key, version 2");
      assertEquals(403, api.send("DELETE", "/api/v1/admin/owners/acme/data-key", io.conveyor.testing.KeyedApi.CLIENT,
          null).statusCode(), "admins only");
    }
  }

  @Test
  void a_search_finds_an_encrypted_owners_searchable_metadata_fields_and_nothing_in_the_sealed_text() throws Exception {
    TestSteps steps = new TestSteps();
    io.conveyor.testing.KeyedApi api = new io.conveyor.testing.KeyedApi();
    try (TestNode node = api.on(unstarted("1h")).start(steps.registry().register(probe()))) {
      JsonObject b = body("acme");
      b.getJsonObject("metadata").put("orderId", "ORD-77");
      String txId = new JsonObject(api.send("POST", "/api/v1/transactions", io.conveyor.testing.KeyedApi.CLIENT,
          b.encode()).body()).getString("txId");
      node.awaitFinal(txId);
      JsonObject stored = new JsonObject(TestRedis.cmd("HGET", node.keys.stateH(txId), "metadata").toString());
      assertEquals(new JsonObject().put("orderId", "ORD-77"), stored.getJsonObject("clear"), stored.encode());
      String sealedText = stored.getString("$sealed");
      String inBase64 = sealedText.substring(sealedText.length() - 12, sealedText.length() - 4);
      for (String q : List.of("ORD-77", MARKER, inBase64)) {
        String found = api.send("GET", "/api/v1/transactions?q=" + java.net.URLEncoder.encode(q,
            java.nio.charset.StandardCharsets.UTF_8), io.conveyor.testing.KeyedApi.CLIENT, null).body();
        assertEquals(q.equals("ORD-77"), found.contains(txId), q + ": " + found);
      }
      String hit = api.send("GET", "/api/v1/transactions?q=ord-77", io.conveyor.testing.KeyedApi.CLIENT, null).body();
      assertTrue(hit.contains(MARKER), "the hit reads in clear: " + hit);
    }
  }

  @Test
  void the_compensation_of_an_encrypted_owners_failed_transaction_gets_its_input_note_and_errors_in_clear() {
    TestSteps steps = new TestSteps();
    try (TestNode node = node(steps)) {
      Transactions tx = node.nodeTransactions();
      String txId = tx.start(body("acme").put("type", "failing")).await().txId();
      io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "the compensation to run",
          () -> steps.recorded.size(), n -> n >= 1);
      JsonObject given = steps.recorded.get(0).getJsonObject("input");
      assertEquals(txId, given.getString("txId"), given.encode());
      assertEquals(MARKER, given.getJsonObject("input").getString("card"), given.encode());
      assertEquals("card " + MARKER + " declined", given.getJsonArray("errors").getJsonObject(0).getString("message"),
          given.encode());
      assertTrue(given.getString("note").contains(MARKER), given.encode());
      for (String value : everything(node.prefix)) {
        assertFalse(value.contains(MARKER), "Redis holds the marker in clear: " + value);
      }
    }
  }

  @Test
  void a_rerun_of_an_encrypted_owners_failed_transaction_gives_the_step_its_input_in_clear_and_stores_it_sealed() {
    TestSteps steps = new TestSteps();
    try (TestNode node = node(steps)) {
      Transactions tx = node.nodeTransactions();
      // no retry: the probe fails its first attempt, so the transaction fails, and so does each rerun of it
      String txId = tx.start(body("acme").put("type", "failing")).await().txId();
      assertEquals("failed", node.awaitFinal(txId).status().wire());
      tx.rerun(txId, "acme", false).await();
      TxSummary again = io.conveyor.testing.Eventually.until(java.time.Duration.ofSeconds(10), "the rerun to end",
          () -> tx.status(txId, "acme").await(), t -> t.status().isFinal() && t.toJson().containsKey("runs"));
      assertEquals("failed", again.status().wire());
      // the probe named the card it was given: it got the input in clear on the rerun too
      assertTrue(again.note().contains("card " + MARKER + " declined"), again.toJson().encode());
      JsonObject earlier = again.toJson().getJsonArray("runs").getJsonObject(0);
      assertTrue(earlier.encode().contains(MARKER), "the first run reads in clear: " + earlier.encode());
      for (String value : everything(node.prefix)) {
        assertFalse(value.contains(MARKER), "Redis holds the marker in clear: " + value);
      }
    }
  }

  @Test
  void an_owner_without_encryption_is_stored_in_clear_as_before() {
    TestSteps steps = new TestSteps();
    try (TestNode node = node(steps)) {
      Transactions tx = node.nodeTransactions();
      String txId = tx.start(body("globex")).await().txId();
      node.awaitFinal(txId);
      String input = TestRedis.cmd("HGET", node.keys.stateH(txId), "input").toString();
      assertEquals(new JsonObject().put("card", MARKER), new JsonObject(input));
      TxSummary s = tx.status(txId, "globex").await();
      assertEquals(MARKER, s.output().getString("charged"));
      assertTrue(TestRedis.cmd("HGET", node.keys.stateH(txId), "output").toString().contains(MARKER));
      assertEquals(null, TestRedis.cmd("HGET", new io.conveyor.redis.DataKeyStore(node.store.context).dataKeysH(),
          "k:globex"), "no data key is made for an owner without encryption");
      // a client's object shaped like a sealed one would be taken for one on reads: refused at the edge, for anyone
      for (String field : List.of("input", "metadata")) {
        JsonObject forged = body("globex").put(field, new JsonObject().put("$sealed", "sealed:v1:1:AAAA").put("tx", txId));
        io.conveyor.model.TxException refused = org.junit.jupiter.api.Assertions.assertThrows(
            io.conveyor.model.TxException.class, () -> tx.start(forged).await());
        assertEquals(field + ".$sealed", refused.field(), refused.getMessage());
      }
    }
  }
}
