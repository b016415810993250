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
    assertEquals(names.stream().sorted().toList(), new Scripts().all().stream().map(LuaScript::name).sorted().toList());
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

  @Test
  void the_lua_table_of_reply_codes_and_the_java_enum_name_the_same_codes() throws IOException {
    String lib = Files.readString(Path.of("src/main/resources/lua/lib/codes.lua"));
    String list = lib.substring(lib.indexOf("ipairs({") + 8, lib.indexOf("})"));
    List<String> lua = java.util.Arrays.stream(list.split(",")).map(c -> c.trim().replace("'", ""))
        .filter(c -> !c.isEmpty()).sorted().toList();
    assertEquals(java.util.Arrays.stream(Code.values()).map(Enum::name).sorted().toList(), lua);
  }

  @Test
  void a_script_builds_a_key_only_from_a_prefix_its_header_says_why_it_must() throws IOException {
    for (Path f : files()) {
      String text = Files.readString(f);
      String header = text.lines().takeWhile(l -> l.startsWith("--")).reduce("", (a, b) -> a + b + "\n");
      String body = text.substring(header.length());
      boolean builds = java.util.regex.Pattern.compile("[A-Za-z]+Prefix \\.\\.").matcher(body).find();
      String prose = header.replaceAll("\\s*\\n--\\s*", " ");
      if (builds) {
        assertTrue(prose.contains("known only") || prose.contains("cannot be known"),
            f + " builds keys in Lua; its header must say why they cannot be passed in KEYS");
      }
      assertTrue(!body.contains("prefix .. '"), f + " builds a key name from the global prefix");
    }
  }

  @Test
  void an_unknown_reply_code_fails_the_script_instead_of_answering_nil() {
    try (ScriptHarness h = new ScriptHarness()) {
      String source = LuaScript.includes("-- probe " + h.prefix + "\n-- #include codes\nreturn CODE.NO_SUCH_CODE");
      LuaScript probe = new LuaScript("probe", source, LuaScript.sha1(source));
      Throwable e = org.junit.jupiter.api.Assertions.assertThrows(Throwable.class,
          () -> Scripts.run(h.link, probe, List.of(), List.of()).await());
      assertTrue(String.valueOf(e.getMessage()).contains("unknown reply code NO_SUCH_CODE"), e.getMessage());
    }
  }

  @Test
  void the_lua_summary_fields_and_the_java_ones_are_the_same_names_in_the_same_order() throws IOException {
    String lib = Files.readString(Path.of("src/main/resources/lua/lib/summary.lua"));
    String list = lib.substring(lib.indexOf("STATE_FIELDS = {") + 16, lib.indexOf("}", lib.indexOf("STATE_FIELDS = {")));
    List<String> lua = java.util.Arrays.stream(list.split(",")).map(c -> c.trim().replace("'", ""))
        .filter(c -> !c.isEmpty()).toList();
    assertEquals(Summaries.STATE_FIELDS, lua);
  }

  @Test
  void no_script_but_the_summary_library_lists_the_summary_fields() throws IOException {
    for (Path f : files()) {
      String text = Files.readString(f);
      assertTrue(!text.contains("'processingState', 'attempt', 'created', 'updated'"),
          f + " lists the summary fields itself; include lib/summary.lua instead");
    }
  }

  /**
   * A script's own text after its header, as top-level statements: a line at column 0 with the indented or
   * closing lines that follow it (blank and comment lines left out).
   */
  private static List<String> statements(String text) {
    List<String> out = new java.util.ArrayList<>();
    boolean header = true;
    for (String line : text.split("\n")) {
      header = header && line.startsWith("--");
      if (header || line.isBlank() || line.startsWith("--")) {
        continue;
      }
      boolean continues = Character.isWhitespace(line.charAt(0)) || line.startsWith("end") || line.startsWith("}")
          || line.startsWith(")");
      if (continues && !out.isEmpty()) {
        out.set(out.size() - 1, out.get(out.size() - 1) + line + "\n");
      } else {
        out.add(line + "\n");
      }
    }
    return out;
  }

  /**
   * The locals block: the statements a script opens with that read KEYS or ARGV into named locals, each a
   * plain local (no Redis call) or a short accessor function for a variable part.
   */
  private static boolean inLocalsBlock(String statement) {
    return statement.startsWith("local ") && KEYS_OR_ARGV.matcher(statement).find() && !statement.contains("redis.call")
        && !(statement.startsWith("local function") && statement.lines().count() > 6);
  }

  private static final java.util.regex.Pattern KEYS_OR_ARGV = java.util.regex.Pattern.compile("\\b(KEYS|ARGV)\\b");

  @Test
  void every_script_reads_keys_and_argv_only_in_the_named_locals_it_opens_with() throws IOException {
    for (Path f : files()) {
      boolean inBlock = true;
      for (String statement : statements(Files.readString(f))) {
        inBlock = inBlock && inLocalsBlock(statement);
        assertTrue(inBlock || !KEYS_OR_ARGV.matcher(statement).find(),
            f + " reads KEYS or ARGV after the locals block it opens with; name it there instead:\n" + statement);
      }
    }
  }

  @Test
  void the_locals_rule_refuses_a_script_that_indexes_keys_after_its_first_statement() {
    String script = "-- probe\n-- KEYS[1] a\n-- ARGV[1] b\n-- Replies: none\nlocal a = KEYS[1]\n"
        + "redis.call('GET', a)\nreturn redis.call('GET', KEYS[1])\n";
    List<String> statements = statements(script);
    assertTrue(inLocalsBlock(statements.get(0)));
    assertTrue(!inLocalsBlock(statements.get(1)) && KEYS_OR_ARGV.matcher(statements.get(2)).find());
  }

  /**
   * The hot path's scripts answer their stats counts (lib/stats.lua stats_flat) for the node to add up and write
   * once a second (StatsTally): at a steady load their HINCRBYs were half of Redis's commands. One of them that
   * writes its counts itself again would count them twice.
   */
  @Test
  void start_and_complete_answer_their_stats_counts_and_never_write_them() throws IOException {
    for (String name : List.of("start", "complete")) {
      String source = Files.readString(Path.of("src/main/resources/lua", name + ".lua"));
      assertTrue(!source.contains("stats_write(") && !source.contains("stats_apply("), name + ".lua writes its counts");
      assertTrue(source.contains("replies[txCount + 1] = stats_flat(counts)"), name + ".lua answers its counts last");
    }
  }

  @Test
  void every_header_lists_keys_before_argv_and_no_script_is_over_250_lines() throws IOException {
    for (Path f : files()) {
      List<String> lines = Files.readString(f).lines().toList();
      int lastKeys = -1;
      int firstArgv = Integer.MAX_VALUE;
      for (int i = 0; i < lines.size() && lines.get(i).startsWith("--"); i++) {
        lastKeys = lines.get(i).startsWith("-- KEYS") ? i : lastKeys;
        firstArgv = lines.get(i).startsWith("-- ARGV") ? Math.min(firstArgv, i) : firstArgv;
      }
      assertTrue(lastKeys < firstArgv, f + ": its header lists KEYS after ARGV");
      assertTrue(lines.size() <= 250, f + " has " + lines.size() + " lines, over 250: move a part to lua/lib");
    }
  }
}
