package io.conveyor.redis;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.redis.WebhookStore.WebhookBatch;
import io.conveyor.redis.WebhookStore.WebhookLimits;
import io.conveyor.redis.WebhookStore.WebhookResult;
import io.conveyor.testing.ScriptTest;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** webhook.lua and webhook-cancel.lua against the real Redis. */
class WebhookScriptTest extends ScriptTest {
  private static final WebhookLimits LIMITS = new WebhookLimits(Duration.ofSeconds(10), Duration.ofSeconds(2),
      Duration.ofSeconds(15), 3, Duration.ofMinutes(10), Duration.ofMinutes(5));

  /** A finished transaction with its completion webhook due now. */
  private void due(String txId, boolean archived) {
    long now = h.clock.millis();
    if (!archived) {
      cmd("HSET", h.keys.stateH(txId), "owner", "acme", "type", "order", "status", "success", "processingState",
          "complete", "attempt", "1", "created", "1", "updated", "2", "completed", "2", "webhookUrl", "http://x/h");
    }
    cmd("HSET", h.keys.webhookH(txId), "txId", txId, "owner", "acme", "url", "http://x/h", "urlHash", "u1",
        "event", "complete", "eventTime", Long.toString(now), "status", "pending", "attempts", "0");
    cmd("ZADD", h.keys.webhooksZ(0), Long.toString(now), txId);
  }

  private WebhookBatch call(String node, List<WebhookResult> results, int max) {
    return h.store.webhooks.webhookBatch(0, node, results, max, LIMITS).await();
  }

  @Test
  void the_leader_gets_due_deliveries_each_rescheduled_first_and_another_node_gets_none() {
    due("tx-a", false);
    assertTrue(call("node-b", List.of(), 0).jobs().isEmpty());
    assertFalse(call("node-b", List.of(), 0).leader(), "a call that only records never takes a free lease");
    cmd("SET", h.keys.lock1(LeaderRole.WEBHOOKS, 0), "node-a");
    cmd("SET", h.keys.lock2(LeaderRole.WEBHOOKS, 0), "node-a");
    WebhookBatch other = call("node-b", List.of(), 10);
    assertFalse(other.leader());
    cmd("DEL", h.keys.lock1(LeaderRole.WEBHOOKS, 0), h.keys.lock2(LeaderRole.WEBHOOKS, 0));
    WebhookBatch batch = call("node-a", List.of(), 10);
    assertEquals(1, batch.jobs().size());
    assertEquals("deliver", batch.jobs().get(0).kind());
    assertEquals("acme", batch.jobs().get(0).summary().owner());
    assertEquals(h.clock.millis() + 15_000, cmd("ZSCORE", h.keys.webhooksZ(0), "tx-a").toLong());
    assertTrue(call("node-a", List.of(), 10).jobs().isEmpty(), "not handed out twice");
  }

  @Test
  void a_delivered_result_moves_the_state_into_the_transaction_and_a_stale_one_is_ignored() {
    due("tx-a", false);
    call("node-a", List.of(), 10);
    call("node-a", List.of(new WebhookResult("tx-a", "delivered", 2, 200, null, 0)), 0); // not the next attempt
    assertEquals("pending", cmd("HGET", h.keys.webhookH("tx-a"), "status").toString());
    call("node-a", List.of(new WebhookResult("tx-a", "delivered", 1, 200, null, 0)), 0);
    assertEquals(0L, cmd("EXISTS", h.keys.webhookH("tx-a")).toLong());
    assertNull(cmd("ZSCORE", h.keys.webhooksZ(0), "tx-a"));
    JsonObject state = new JsonObject(cmd("HGET", h.keys.stateH("tx-a"), "webhook").toString());
    assertEquals("delivered", state.getString("status"));
    assertEquals(1, state.getInteger("attempts"));
    assertEquals(200, state.getInteger("lastCode"));
    assertEquals("1", cmd("HGET", h.keys.stateH("tx-a"), "rev").toString());
  }

  @Test
  void failures_past_the_limit_pause_the_url_and_its_due_deliveries_move_past_the_pause() {
    for (String id : List.of("tx-a", "tx-b", "tx-c", "tx-d")) {
      due(id, false);
    }
    call("node-a", List.of(), 3);
    long next = h.clock.millis() + 1000;
    call("node-a", List.of(new WebhookResult("tx-a", "retry", 1, 500, "HTTP 500", next),
        new WebhookResult("tx-b", "retry", 1, 500, "HTTP 500", next),
        new WebhookResult("tx-c", "retry", 1, 500, "HTTP 500", next)), 0);
    long pausedUntil = Long.parseLong(cmd("GET", h.keys.webhookPause(0, "u1")).toString());
    assertEquals(h.clock.millis() + 300_000, pausedUntil);
    assertTrue(call("node-a", List.of(), 10).jobs().isEmpty(), "tx-d is due but its URL is paused");
    assertEquals(pausedUntil, cmd("ZSCORE", h.keys.webhooksZ(0), "tx-d").toLong());
    assertTrue(cmd("LINDEX", h.keys.eventsL(0), "0").toString().contains("webhook-url-paused"));
    // late results of attempts made before the pause (a leader that was itself paused reports them) reach
    // the limit again: the pause stands as it was, and is not logged again
    h.clock.advance(java.time.Duration.ofSeconds(1));
    call("node-a", List.of(new WebhookResult("tx-a", "retry", 2, 500, "HTTP 500", next),
        new WebhookResult("tx-b", "retry", 2, 500, "HTTP 500", next),
        new WebhookResult("tx-c", "retry", 2, 500, "HTTP 500", next)), 0);
    assertEquals(pausedUntil, Long.parseLong(cmd("GET", h.keys.webhookPause(0, "u1")).toString()));
    assertEquals(1L, cmd("LRANGE", h.keys.eventsL(0), "0", "-1").stream()
        .filter(e -> e.toString().contains("webhook-url-paused")).count());
  }

  @Test
  void an_outcome_for_an_archived_transaction_becomes_a_sync_job_until_the_archive_has_it() {
    due("tx-a", true);
    call("node-a", List.of(), 10);
    WebhookBatch next = call("node-a", List.of(new WebhookResult("tx-a", "gone", 1, 410, "gone", 0)), 10);
    assertEquals(1, next.jobs().size());
    assertEquals("sync", next.jobs().get(0).kind());
    assertEquals("gone", new JsonObject(next.jobs().get(0).event().getString("state")).getString("status"));
    call("node-a", List.of(new WebhookResult("tx-a", "synced", 0, null, null, 0)), 10);
    assertEquals(0L, cmd("EXISTS", h.keys.webhookH("tx-a")).toLong());
    assertNull(cmd("ZSCORE", h.keys.webhooksZ(0), "tx-a"));
  }

  @Test
  void a_poll_reply_cancels_a_delivery_not_yet_begun_and_not_one_under_way() {
    due("tx-a", false);
    due("tx-b", false);
    assertEquals(Code.CANCELLED, h.store.webhooks.cancelWebhook("tx-a").await());
    assertEquals("cancelled", new JsonObject(cmd("HGET", h.keys.stateH("tx-a"), "webhook").toString())
        .getString("status"));
    assertEquals(Code.NOT_PENDING, h.store.webhooks.cancelWebhook("tx-a").await());
    call("node-a", List.of(), 10);
    assertEquals(Code.TOO_LATE, h.store.webhooks.cancelWebhook("tx-b").await());
  }
}
