package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.FullRedis;
import io.conveyor.testing.MutableClock;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What Redis does at its memory wall, and what the node sends it: on a Redis 7 of the test's own (noeviction) filled past its
 * maxmemory, a flagged script without allow-oom is refused whole, one with it runs; one without flags is refused
 * at its first write that needs memory unless it wrote before, and then runs to its end past the limit. Every
 * refusal is RedisUnavailable.Full ("Redis is full"). The memory probe reads
 * used_memory and maxmemory there and records the crossing's event.
 */
class MemoryGuardScriptTest {
  private static FullRedis redis;
  private static Vertx vertx;
  private static RedisLink link;
  private static StoreContext context;

  @BeforeAll
  static void fill() {
    redis = FullRedis.local("64mb");
    vertx = Vertx.vertx();
    link = new RedisLink(vertx, RedisLink.options(redis.url(), 100));
    context = new StoreContext(link, new Keys("m:"), new Scripts(true), new MutableClock(1_800_000_000_000L));
    link.send(Request.cmd(Command.SET).arg("m:half").arg("1")).await();
    String mb = "x".repeat(1 << 20);
    for (int i = 0; i < 3; i++) {
      link.send(Request.cmd(Command.SET).arg("m:fill" + i).arg(mb)).await();
    }
    // a limit below what it holds: noeviction refuses every write that needs memory from now on
    link.send(Request.cmd(Command.CONFIG).arg("SET").arg("maxmemory").arg(Long.toString(2L << 20))).await();
  }

  @AfterAll
  static void stop() {
    link.close().await();
    vertx.close().await();
    redis.close();
  }

  private static LuaScript script(String name, String body) {
    String source = "-- " + name + "\n" + body;
    return new LuaScript(name, source, LuaScript.sha1(source));
  }

  private static boolean exists(String key) {
    return link.send(Request.cmd(Command.EXISTS).arg(key)).await().toInteger() == 1;
  }

  @Test
  void a_flagged_script_without_allow_oom_is_refused_whole_as_redis_is_full() {
    LuaScript creates = script("creates", "redis.call('DEL', KEYS[1])\nredis.call('SET', KEYS[2], 'x')\nreturn 1")
        .withShebang("#!lua");
    Throwable e = assertThrows(Throwable.class,
        () -> Scripts.run(link, creates, List.of("m:fill0", "m:new1"), List.of()).await());
    assertInstanceOf(RedisUnavailable.Full.class, e);
    assertTrue(e.getMessage().startsWith("Redis is full"), e.getMessage());
    assertTrue(exists("m:fill0"), "nothing of it ran: the key it deletes first is still there");
    assertFalse(exists("m:new1"));
  }

  @Test
  void a_script_with_allow_oom_writes_at_the_wall() {
    LuaScript finishes = script("finishes", "redis.call('SET', KEYS[1], ARGV[1])\nreturn 1")
        .withShebang("#!lua flags=allow-oom");
    assertEquals(1, Scripts.run(link, finishes, List.of("m:done"), List.of("ok")).await().toInteger());
    assertTrue(exists("m:done"));
  }

  @Test
  void a_script_without_flags_is_refused_at_its_first_write_that_needs_memory_when_it_wrote_nothing_before() {
    LuaScript legacy = script("legacy-first", "local seen = redis.call('EXISTS', KEYS[1])\n"
        + "redis.call('SET', KEYS[2], 'x')\nreturn seen");
    Throwable e = assertThrows(Throwable.class,
        () -> Scripts.run(link, legacy, List.of("m:fill2", "m:new2"), List.of()).await());
    assertInstanceOf(RedisUnavailable.Full.class, e, e.getMessage());
    assertFalse(exists("m:new2"));
  }

  @Test
  void a_script_without_flags_that_wrote_before_runs_to_its_end_past_the_limit() {
    // Redis cannot stop a script in the middle: once it wrote (a DEL needs no memory), every later write goes
    LuaScript legacy = script("legacy-after", "redis.call('DEL', KEYS[1])\nredis.call('SET', KEYS[2], 'x')\n"
        + "return 1");
    assertTrue(exists("m:half"));
    assertEquals(1, Scripts.run(link, legacy, List.of("m:half", "m:new3"), List.of()).await().toInteger());
    assertFalse(exists("m:half"));
    assertTrue(exists("m:new3"), "written above maxmemory");
  }

  @Test
  void the_memory_probe_reads_used_and_maxmemory_and_records_a_crossing_at_the_wall() {
    MemoryStore store = new MemoryStore(context);
    MemoryStore.Reading r = store.read(0, "redis-memory-high", "node-test", new JsonObject().put("used", 1)).await();
    assertEquals(2L << 20, r.max());
    assertTrue(r.used() >= r.max(), "filled past the limit: " + r);
    String event = link.send(Request.cmd(Command.LINDEX).arg(context.keys().eventsL(0)).arg(0)).await().toString();
    JsonObject e = new JsonObject(event);
    assertEquals("redis-memory-high", e.getString("kind"));
    assertEquals("node-test", e.getString("node"));
    assertEquals(1_800_000_000_000L, e.getLong("time"));
  }

  @Test
  void on_redis_7_the_node_sends_each_script_with_its_flags_and_redis_takes_them_all() {
    Scripts scripts = Scripts.forServer(link).await();
    assertTrue(scripts.flagged());
    assertTrue(scripts.sent(scripts.start).source().startsWith("#!lua\n"), "a start is refused at the wall");
    assertTrue(scripts.sent(scripts.fork).source().startsWith("#!lua\n"), "so is a child's creation");
    for (LuaScript s : List.of(scripts.complete, scripts.cancel, scripts.archive, scripts.heartbeat, scripts.lease,
        scripts.dequeue, scripts.memory)) {
      assertTrue(scripts.sent(s).source().startsWith("#!lua flags=allow-oom\n"), s.name());
    }
    scripts.loadAll(link).await();
  }

  @Test
  void on_the_embedded_redis_6_2_scripts_go_as_written_for_it_has_no_flags() {
    try (FullRedis old = FullRedis.embedded("64mb")) {
      RedisLink oldLink = new RedisLink(vertx, RedisLink.options(old.url(), 100));
      try {
        Scripts scripts = Scripts.forServer(oldLink).await();
        assertFalse(scripts.flagged());
        assertEquals(scripts.start, scripts.sent(scripts.start));
        scripts.loadAll(oldLink).await();
      } finally {
        oldLink.close().await();
      }
    }
  }
}
