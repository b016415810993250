package io.conveyor.domain;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxException;
import io.conveyor.pipeline.CompiledPipeline;
import io.conveyor.pipeline.PipelineException;
import io.conveyor.redis.Rollouts;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A rollout (issue 34): an upload with "rollout": {"share": n} makes a canary that takes n % of new starts (a hash
 * of the txId in start.lua), the version before it the rest; promote and rollback end it. On one Redis, or three
 * partitions on the cluster pass. The pipelines run in a group no node serves, so every start stays queued and its
 * version can be read from its stateH.
 */
class RolloutTest {
  private static final String V1 = "{'name':'pay','nodeGroup':'elsewhere','transactionType':true,"
      + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'v':1}}}]}";
  private static final String V2 = "{'name':'pay','nodeGroup':'elsewhere','transactionType':true,"
      + "'steps':[{'type':'util/fixed-reply','params':{'reply':{'v':2}}}],'rollout':{'share':10}}";
  private final TestSteps steps = new TestSteps();
  private final List<TestNode> nodes = new ArrayList<>();

  private TestNode node() {
    TestNode n = nodes.isEmpty() ? new TestNode().pipeline("pay", V1) : nodes.get(0).sibling();
    n.start(steps.registry());
    nodes.add(n);
    return n;
  }

  @AfterEach
  void stop() {
    for (int i = nodes.size() - 1; i >= 0; i--) {
      nodes.get(i).close();
    }
  }

  private static CompiledPipeline parse(TestNode n, String json) {
    return n.node().catalog().parser().parse(new JsonObject(json.replace('\'', '"')), "test");
  }

  /** Publishes json as an upload does (PipelineRoutes): through the node's catalog, made now. */
  private static String upload(TestNode n, String json) {
    CompiledPipeline p = parse(n, json);
    n.node().catalog().publish(n.store.pipelines, p, System.currentTimeMillis()).await();
    return p.version();
  }

  /** Starts count transactions of pay and answers how many started on each version, from their stateH. */
  private static Map<String, Integer> starts(TestNode n, int count) {
    List<String> ids = new ArrayList<>();
    for (int from = 0; from < count; from += 500) {
      List<Future<String>> batch = new ArrayList<>();
      for (int i = from; i < Math.min(count, from + 500); i++) {
        batch.add(n.transactions.start(new JsonObject().put("type", "pay").put("owner", "acme")
            .put("input", new JsonObject().put("i", i))).map(s -> s.txId()));
      }
      Future.all(batch).await();
      batch.forEach(f -> ids.add(f.result()));
    }
    Map<String, Integer> byVersion = new HashMap<>();
    for (String id : ids) {
      byVersion.merge(cmd("HGET", n.keys.stateH(id), "version").toString(), 1, Integer::sum);
    }
    return byVersion;
  }

  @Test
  void a_ten_percent_canary_takes_eight_to_twelve_percent_of_ten_thousand_starts() {
    TestNode n = node();
    String v1 = parse(n, V1).version();
    String v2 = upload(n, V2);
    Map<String, Integer> got = starts(n, 10_000);
    int canary = got.getOrDefault(v2, 0);
    assertEquals(10_000, canary + got.getOrDefault(v1, 0), "every start on the canary or the stable: " + got);
    System.out.printf("a 10 %% canary took %d of 10000 starts%n", canary);
    assertTrue(canary >= 800 && canary <= 1200, "the canary's starts: " + canary);
    JsonObject state = new Rollouts(n.store.context).state("pay").await();
    assertEquals("canary", state.getString("state"));
    assertEquals(v2, state.getString("version"));
    assertEquals(v1, state.getString("stable"));
    assertEquals(10, state.getInteger("share"));
  }

  @Test
  void rollback_sends_every_later_start_to_the_stable_version_and_its_transactions_keep_theirs() {
    TestNode n = node();
    String v1 = parse(n, V1).version();
    String v2 = upload(n, V2);
    Map<String, Integer> before = starts(n, 300);
    assertTrue(before.getOrDefault(v2, 0) > 0, "some on the canary: " + before);
    n.pipeline("pay", V2); // a file-driven deployment's canary, changed before the rollback
    JsonObject back = new Rollouts(n.store.context).act("pay", "rollback").await();
    List<String> logged = new ArrayList<>();
    new io.conveyor.redis.EventStore(n.store.context).read(new io.conveyor.redis.EventStore.Filter("pipeline-rollout",
        null, "pay", null, null, 10)).await().forEach(e -> logged.add(((JsonObject) e).getJsonObject("details")
        .getString("action") + " " + ((JsonObject) e).getJsonObject("details").getString("version")));
    assertEquals(List.of("rollback " + v1, "canary " + v2), logged, "newest first");
    assertEquals("rolledback", back.getString("state"));
    assertEquals(v1, back.getString("version"));
    assertEquals(v2, back.getString("canary"));
    assertEquals(Map.of(v1, 500), starts(n, 500));
    // the definition current is the stable's again, for every reader of the pipeline
    assertEquals(v1, n.store.pipelines.pipelines().await().getJsonObject("pay").getString("version"));
    // a node that starts with the canary's file does not publish it again
    TestNode restarted = node();
    assertEquals(Map.of(v1, 200), starts(restarted, 200));
  }

  @Test
  void promote_sends_every_start_to_the_canary() {
    TestNode n = node();
    upload(n, V2);
    JsonObject promoted = new Rollouts(n.store.context).act("pay", "promote").await();
    assertEquals("promoted", promoted.getString("state"));
    String v2 = promoted.getString("version");
    assertEquals(Map.of(v2, 500), starts(n, 500));
    TxException again = assertThrows(TxException.class, () -> new Rollouts(n.store.context).act("pay", "promote")
        .await());
    assertTrue(again.getMessage().contains("no rollout under way (its last one was promoted)"), again.getMessage());
  }

  @Test
  void a_second_node_and_a_restarted_one_see_the_same_rollout_from_redis() {
    TestNode first = node();
    String v1 = parse(first, V1).version();
    String v2 = upload(first, V2);
    TestNode second = node();
    Map<String, Integer> got = starts(second, 2_000);
    assertTrue(got.getOrDefault(v2, 0) >= 120 && got.getOrDefault(v2, 0) <= 280, "canary's of 2000: " + got);
    first.stopKeepingData();
    nodes.remove(first);
    TestNode third = node();
    assertEquals("canary", new Rollouts(third.store.context).state("pay").await().getString("state"));
    new Rollouts(third.store.context).act("pay", "rollback").await();
    assertEquals(Map.of(v1, 300), starts(second, 300));
  }

  @Test
  void a_file_with_a_rollout_publishes_its_version_as_a_canary_when_a_node_starts_with_it() {
    TestNode n = node();
    String v1 = parse(n, V1).version();
    n.pipeline("pay", V2);
    TestNode next = node();
    JsonObject state = new Rollouts(next.store.context).state("pay").await();
    assertEquals("canary", state.getString("state"));
    assertEquals(v1, state.getString("stable"));
    assertNotEquals(v1, state.getString("version"));
  }

  @Test
  void bad_rollouts_are_refused_naming_the_field_and_leave_the_pipeline_as_it_was() {
    TestNode n = node();
    String v1 = parse(n, V1).version();
    for (String share : List.of("0", "100", "'ten'", "10.5")) {
      PipelineException e = assertThrows(PipelineException.class, () -> parse(n, V2.replace("'share':10",
          "'share':" + share)));
      assertTrue(e.getMessage().contains("rollout.share: expected"), e.getMessage());
    }
    PipelineException unknown = assertThrows(PipelineException.class, () -> parse(n, V2.replace("'share':10",
        "'share':10,'percent':5")));
    assertTrue(unknown.getMessage().contains("rollout: unknown field 'percent'"), unknown.getMessage());
    TxException other = assertThrows(TxException.class, () -> upload(n, V2.replace("elsewhere", "other")));
    assertEquals("rollout", other.field());
    assertTrue(other.getMessage().contains("node group elsewhere"), other.getMessage());
    TxException first = assertThrows(TxException.class, () -> upload(n, V2.replace("pay", "fresh")));
    assertTrue(first.getMessage().contains("rollout: pipeline fresh has no previous version"), first.getMessage());
    assertEquals(0L, cmd("EXISTS", n.keys.pipelineH("fresh")).toLong());
    JsonObject state = new Rollouts(n.store.context).state("pay").await();
    assertEquals("none", state.getString("state"));
    assertEquals(v1, state.getString("version"));
    TxException none = assertThrows(TxException.class, () -> new Rollouts(n.store.context).act("pay", "rollback")
        .await());
    assertEquals(TxException.Kind.NO_ROLLOUT, none.kind());
  }
}
