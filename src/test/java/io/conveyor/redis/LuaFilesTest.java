package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.ScriptHarness;
import io.conveyor.testing.TestRedis;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every file under lua/: it has a header naming KEYS, ARGV and replies, Redis accepts it, and the node runs it. */
class LuaFilesTest {
  private static List<Path> files() throws IOException {
    try (Stream<Path> s = Files.list(Path.of("src/main/resources/lua"))) {
      return s.filter(p -> p.toString().endsWith(".lua")).sorted().toList();
    }
  }

  @Test
  void every_script_opens_with_a_header_naming_keys_argv_and_replies() throws IOException {
    for (Path f : files()) {
      String header = Files.readString(f).lines().takeWhile(l -> l.startsWith("--"))
          .reduce("", (a, b) -> a + b + "\n");
      assertTrue(header.contains("KEYS"), f + " header lacks KEYS");
      assertTrue(header.contains("ARGV"), f + " header lacks ARGV");
      assertTrue(header.contains("Replies"), f + " header lacks Replies");
    }
  }

  @Test
  void every_script_loads_into_redis_and_has_the_sha_the_node_uses() throws IOException {
    try (ScriptHarness h = new ScriptHarness()) {
      for (Path f : files()) {
        // as the node sends it: with its included libraries
        String source = LuaScript.load(f.getFileName().toString().replace(".lua", "")).source();
        String sha = h.link.send(Request.cmd(Command.SCRIPT).arg("LOAD").arg(source)).await().toString();
        assertEquals(LuaScript.sha1(source), sha, f.toString());
      }
    }
  }

  @Test
  void the_node_knows_every_script_file() throws IOException {
    List<String> names = files().stream().map(p -> p.getFileName().toString().replace(".lua", "")).toList();
    assertEquals(names.stream().sorted().toList(), Scripts.NAMES.stream().sorted().toList());
  }

  @Test
  void a_script_redis_does_not_know_is_run_from_its_source() {
    try (ScriptHarness h = new ScriptHarness()) {
      // a source no Redis has seen (a unique comment), so EVALSHA must answer NOSCRIPT
      String source = "-- probe " + h.prefix + "\nreturn {KEYS[1], ARGV[1]}";
      LuaScript unknown = new LuaScript("probe", source, LuaScript.sha1(source));
      assertEquals(0, TestRedis.cmd("SCRIPT", "EXISTS", unknown.sha()).get(0).toInteger());
      var reply = Scripts.run(h.link, unknown, List.of(h.prefix + "k"), List.of("v")).await();
      assertEquals(h.prefix + "k", reply.get(0).toString());
      assertEquals("v", reply.get(1).toString());
    }
  }
}
