package io.conveyor.redis;

import io.conveyor.testing.TestRedis;
import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.ScriptTest;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** lease, heartbeat and reap, each against the real Redis. */
class LivenessScriptsTest extends ScriptTest {
  private static final Duration LEASE = Duration.ofSeconds(10);
  private static final Duration GRACE = Duration.ofSeconds(2);

  @Test
  void the_first_caller_takes_the_lease_renews_it_and_others_are_refused() {
    assertTrue(h.store.liveness.lease(LeaderRole.REAPER, 0, "node-a", LEASE, GRACE).await());
    assertFalse(h.store.liveness.lease(LeaderRole.REAPER, 0, "node-b", LEASE, GRACE).await());
    assertTrue(h.store.liveness.lease(LeaderRole.REAPER, 0, "node-a", LEASE, GRACE).await());
    assertEquals("node-a", cmd("GET", h.keys.lock1(LeaderRole.REAPER, 0)).toString());
    long ttl1 = cmd("PTTL", h.keys.lock1(LeaderRole.REAPER, 0)).toLong();
    long ttl2 = cmd("PTTL", h.keys.lock2(LeaderRole.REAPER, 0)).toLong();
    assertTrue(ttl1 > 9_000 && ttl1 <= 10_000, "lock1 ttl " + ttl1);
    assertTrue(ttl2 > 11_000 && ttl2 <= 12_000, "lock2 ttl " + ttl2);
  }

  @Test
  void when_only_lock2_remains_nobody_else_leads_until_it_expires_but_the_old_leader_may_go_on() {
    h.store.liveness.lease(LeaderRole.REAPER, 0, "node-a", LEASE, GRACE).await();
    cmd("DEL", h.keys.lock1(LeaderRole.REAPER, 0)); // the lease ran out; the grace marker stays
    assertFalse(h.store.liveness.lease(LeaderRole.REAPER, 0, "node-b", LEASE, GRACE).await());
    cmd("DEL", h.keys.lock2(LeaderRole.REAPER, 0)); // the grace ran out too
    assertTrue(h.store.liveness.lease(LeaderRole.REAPER, 0, "node-b", LEASE, GRACE).await());
    cmd("DEL", h.keys.lock1(LeaderRole.REAPER, 0)); // node-b was paused past its lease, but within its grace
    assertFalse(h.store.liveness.lease(LeaderRole.REAPER, 0, "node-a", LEASE, GRACE).await());
    assertTrue(h.store.liveness.lease(LeaderRole.REAPER, 0, "node-b", LEASE, GRACE).await(), "nobody can have led in between");
  }

  @Test
  void a_lease_held_by_a_departed_node_is_freed_and_one_held_by_another_is_not() {
    h.store.liveness.lease(LeaderRole.REAPER, 0, "node-a", LEASE, GRACE).await();
    assertFalse(h.store.liveness.breakLease(LeaderRole.REAPER, 0, List.of("node-x")).await());
    assertEquals("node-a", cmd("GET", h.keys.lock1(LeaderRole.REAPER, 0)).toString());
    assertTrue(h.store.liveness.breakLease(LeaderRole.REAPER, 0, List.of("node-x", "node-a")).await());
    assertTrue(h.store.liveness.lease(LeaderRole.REAPER, 0, "node-b", LEASE, GRACE).await());
  }

  @Test
  void a_heartbeat_writes_the_node_info_with_its_ttl_and_registers_the_node_once() {
    h.store.liveness.register("node-a", new JsonObject().put("group", "g"), Duration.ofSeconds(10)).await();
    long registered = cmd("ZSCORE", h.keys.nodesZ(), "node-a").toLong();
    h.clock.advance(Duration.ofSeconds(2));
    assertEquals(Code.OK, h.store.liveness.heartbeat("node-a", new JsonObject().put("group", "g").put("busy", 3),
        Duration.ofSeconds(10)).await().code());
    assertEquals(registered, cmd("ZSCORE", h.keys.nodesZ(), "node-a").toLong());
    assertEquals(3, new JsonObject(cmd("GET", h.keys.heartbeat("node-a")).toString()).getInteger("busy"));
    assertEquals(java.util.Map.of("node-a", new JsonObject().put("group", "g").put("busy", 3)),
        h.store.liveness.heartbeat("node-a", new JsonObject().put("group", "g").put("busy", 3),
            Duration.ofSeconds(10)).await().view(), "a beat answers the live nodes' info (the partition assignment's view)");
    assertTrue(cmd("PTTL", h.keys.heartbeat("node-a")).toLong() > 9_000);
    assertEquals(Map.of("node-a", new JsonObject().put("group", "g").put("busy", 3)), h.store.liveness.nodes().await());
    h.store.liveness.leave("node-a").await();
    assertEquals(0, cmd("EXISTS", h.keys.heartbeat("node-a"), h.keys.nodesZ()).toInteger());
  }

  @Test
  void a_heartbeat_after_expiry_is_late_but_written_and_one_after_a_takeover_is_fenced_and_not_written() {
    h.store.liveness.register("node-a", new JsonObject(), Duration.ofSeconds(10)).await();
    cmd("DEL", h.keys.heartbeat("node-a")); // silent past its TTL, not taken over yet
    assertEquals(Code.LATE, h.store.liveness.heartbeat("node-a", new JsonObject(), Duration.ofSeconds(10)).await().code());
    assertEquals(1, cmd("EXISTS", h.keys.heartbeat("node-a")).toInteger());
    assertEquals(Code.OK, h.store.liveness.heartbeat("node-a", new JsonObject(), Duration.ofSeconds(10)).await().code());

    cmd("DEL", h.keys.heartbeat("node-a"));
    reap(true); // taken over: it leaves nodesZ
    assertEquals(Code.FENCED, h.store.liveness.heartbeat("node-a", new JsonObject(), Duration.ofSeconds(10)).await().code());
    assertEquals(0, cmd("EXISTS", h.keys.heartbeat("node-a")).toInteger(), "a fenced node writes nothing");
    assertNull(cmd("ZSCORE", h.keys.nodesZ(), "node-a"));
    h.store.liveness.register("node-a", new JsonObject(), Duration.ofSeconds(10)).await();
    assertEquals(Code.OK, h.store.liveness.heartbeat("node-a", new JsonObject(), Duration.ofSeconds(10)).await().code());
  }

  @Test
  void a_heartbeat_into_an_empty_redis_is_fenced_so_the_node_registers_again() {
    assertEquals(Code.FENCED, h.store.liveness.heartbeat("node-a", new JsonObject(), Duration.ofSeconds(10)).await().code());
    assertEquals(0, cmd("EXISTS", h.keys.heartbeat("node-a"), h.keys.nodesZ()).toInteger());
  }

  private Map<String, Integer> reap(boolean judge) {
    LivenessStore.Reaped out = h.store.liveness.reap(judge, Duration.ofSeconds(10)).await();
    assertEquals(0, out.garbage());
    return out.recovered();
  }

  private void running(String txId, String node, int attempt) {
    cmd("HSET", h.keys.stateH(txId), "processingState", "processing", "node", node, "group", "g", "attempt", attempt);
    cmd("ZADD", h.keys.processingZ(0), 1, txId);
    cmd("ZADD", h.keys.inflightZ(0, node), 1, txId);
  }

  @Test
  void reap_puts_a_dead_nodes_work_back_first_in_line_with_the_attempt_raised_and_leaves_live_nodes_alone() {
    h.store.liveness.register("node-live", new JsonObject(), Duration.ofSeconds(10)).await();
    cmd("ZADD", h.keys.nodesZ(), 1, "node-dead"); // registered, heartbeat expired
    running("tx-1", "node-dead", 2);
    running("tx-2", "node-live", 1);
    TestRedis.queueIn(h.keys.qInZ(0, "g"), "tx-waiting");

    assertEquals(Map.of("node-dead", 1), reap(true));

    assertEquals(List.of("tx-1", "tx-waiting"), TestRedis.inQueue(h.keys.qInZ(0, "g")));
    assertEquals("queued", cmd("HGET", h.keys.stateH("tx-1"), "processingState").toString());
    assertEquals("3", cmd("HGET", h.keys.stateH("tx-1"), "attempt").toString());
    assertEquals("0", cmd("HGET", h.keys.stateH("tx-1"), "takenOver").toString(), "marked at its step (index 0)");
    assertNull(cmd("HGET", h.keys.stateH("tx-2"), "takenOver"));
    assertNull(cmd("ZSCORE", h.keys.processingZ(0), "tx-1"));
    assertEquals(0, cmd("EXISTS", h.keys.inflightZ(0, "node-dead")).toInteger());
    assertNull(cmd("ZSCORE", h.keys.nodesZ(), "node-dead"));
    assertEquals("processing", cmd("HGET", h.keys.stateH("tx-2"), "processingState").toString());
    JsonObject event = new JsonObject(cmd("LINDEX", h.keys.eventsL(0), 0).toString());
    assertEquals("node-dead", event.getString("kind"));
    assertEquals("node-dead", event.getString("node"), "the node it is about");
    assertEquals("node-dead", event.getString("subject"));
    assertEquals(h.clock.millis(), event.getLong("time"));
    JsonObject details = event.getJsonObject("details");
    assertEquals("node-dead", details.getString("nodeId"));
    assertEquals("heartbeat expired", details.getString("reason"));
    assertEquals(1, details.getInteger("recovered"));
    // the dead node's late write is refused
    assertEquals(Code.FENCED, h.store.run.checkpoint("tx-1", 2, 1, new JsonObject(), null).await());
  }

  @Test
  void in_a_grace_period_nobody_is_judged_and_after_it_an_expired_heartbeat_is() {
    cmd("ZADD", h.keys.nodesZ(), 1, "node-quiet"); // registered; its heartbeat expired during a Redis outage
    running("tx-1", "node-quiet", 1);
    assertEquals(Map.of(), reap(false));
    assertEquals("processing", cmd("HGET", h.keys.stateH("tx-1"), "processingState").toString());
    assertEquals(Map.of("node-quiet", 1), reap(true));
  }

  @Test
  void a_node_with_a_heartbeat_is_never_taken_over() {
    h.store.liveness.register("node-alive", new JsonObject(), Duration.ofSeconds(10)).await();
    running("tx-1", "node-alive", 1);
    assertEquals(Map.of(), reap(true));
    assertEquals(Code.OK, h.store.liveness.heartbeat("node-alive", new JsonObject(), Duration.ofSeconds(10)).await().code());
  }

  @Test
  void old_processing_entries_with_no_live_owner_are_put_back_cleared_or_set_aside_never_lost() {
    h.store.liveness.register("node-live", new JsonObject(), Duration.ofSeconds(10)).await();
    running("tx-live", "node-live", 1);              // a live owner: left alone
    running("tx-orphan", "node-unknown", 1);         // its node is not registered: put back
    cmd("DEL", h.keys.inflightZ(0, "node-unknown"));
    cmd("HSET", h.keys.stateH("tx-done"), "processingState", "complete");
    cmd("ZADD", h.keys.processingZ(0), 1, "tx-done"); // finished, entry left behind: cleared
    cmd("ZADD", h.keys.processingZ(0), 1, "tx-ghost"); // no state at all: set aside
    cmd("ZADD", h.keys.processingZ(0), h.clock.millis(), "tx-young"); // too recent to judge
    h.clock.advance(Duration.ofSeconds(60));
    cmd("ZADD", h.keys.processingZ(0), h.clock.millis(), "tx-young");

    LivenessStore.Reaped out = h.store.liveness.reap(true, Duration.ofSeconds(10)).await();
    assertEquals(3, out.garbage());
    assertEquals(List.of("tx-orphan"), TestRedis.inQueue(h.keys.qInZ(0, "g")));
    assertEquals("2", cmd("HGET", h.keys.stateH("tx-orphan"), "attempt").toString());
    assertEquals(List.of("tx-live", "tx-young"), cmd("ZRANGE", h.keys.processingZ(0), 0, -1).stream()
        .map(Object::toString).sorted().toList());
    assertEquals(h.clock.millis(), cmd("ZSCORE", h.keys.exceptionZ(0), "tx-ghost").toLong());
    assertEquals("in processingZ without a state",
        new JsonObject(cmd("LINDEX", h.keys.eventsL(0), 0).toString()).getJsonObject("details").getString("reason"));
  }

  @Test
  void reap_leaves_leases_alone_they_run_out_by_themselves_and_a_renewed_one_is_a_live_nodes() {
    cmd("ZADD", h.keys.nodesZ(), 1, "node-lapsed"); // its heartbeat lapsed, but it still renews its lease
    cmd("SET", h.keys.lock1(LeaderRole.ARCHIVE, 0), "node-lapsed");
    cmd("SET", h.keys.lock2(LeaderRole.ARCHIVE, 0), "node-lapsed");
    assertEquals(Map.of("node-lapsed", 0), reap(true));
    assertEquals("node-lapsed", cmd("GET", h.keys.lock1(LeaderRole.ARCHIVE, 0)).toString(),
        "freeing it would make a second archive leader while the first still acts");
  }

}
