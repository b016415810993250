package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.TxStatus;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The hot scripts as a Redis 7 function library (FunctionLibrary): it loads, each hot script is a function, a lib
 * keeps no state between calls but what is reset at each call's start, and a Redis that lost the library (a
 * restart without persistence) is answered from the scripts' source and given the library again.
 */
class FunctionLibraryTest {
  private static final Scripts FLAGGED = new Scripts(true);

  private static Response libraries(String name) {
    return TestRedis.cmd("FUNCTION", "LIST", "LIBRARYNAME", name);
  }

  @Test
  void the_library_loads_and_names_one_function_per_hot_script() {
    FunctionLibrary lib = FLAGGED.library();
    assertNotNull(lib, "a Redis 7 gets the library");
    TestRedis.onEveryServer("FUNCTION", "LOAD", "REPLACE", lib.source());
    Response listed = libraries(lib.name());
    assertEquals(1, listed.size(), "exactly its own library: " + listed);
    String text = listed.toString();
    for (String hot : FunctionLibrary.HOT) {
      assertTrue(text.contains(lib.function(hot)), hot + " is a function of the library: " + text);
    }
    assertEquals(null, new Scripts(false).library(), "a Redis 6 runs every script by EVALSHA");
  }

  @Test
  void a_hot_script_with_code_before_its_includes_is_refused_since_that_code_would_run_once() {
    // lease.lua reads its KEYS before its include: as a function that line would run on the first call only
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> FunctionLibrary.builder("lease"));
    assertTrue(e.getMessage().contains("put the includes first"), e.getMessage());
  }

  @Test
  void a_lib_keeps_no_state_from_one_call_to_the_next_but_what_each_call_resets() throws IOException {
    // as a function, a lib's top-level locals live as long as the library: constants (UPPER_CASE) or functions,
    // or state that FunctionLibrary resets at each call's start (queue_fair)
    Pattern local = Pattern.compile("^local ([A-Za-z_][A-Za-z0-9_, ]*?)\\s*=", Pattern.MULTILINE);
    List<String> stateful = new ArrayList<>();
    try (Stream<Path> libs = Files.list(Path.of("src/main/resources/lua/lib"))) {
      for (Path f : libs.toList()) {
        Matcher m = local.matcher(Files.readString(f));
        while (m.find()) {
          for (String name : m.group(1).split(",")) {
            String n = name.trim();
            if (!n.equals(n.toUpperCase())) {
              stateful.add(f.getFileName() + ":" + n);
            }
          }
        }
      }
    }
    assertEquals(List.of("queue.lua:queue_fair"), stateful, "a lib's state that outlives a call: reset it in "
        + "FunctionLibrary.RESETS, or make it a constant");
  }

  @Test
  void a_redis_that_lost_the_library_answers_from_the_scripts_source_and_gets_it_back() {
    TestSteps steps = new TestSteps();
    try (TestNode node = new TestNode().pipeline("one", "{'name':'one','nodeGroup':'master','transactionType':true,"
        + "'steps':[{'type':'test/record'}]}").start(steps.registry())) {
      FunctionLibrary lib = node.store.context.scripts().library();
      assertNotNull(lib, "the test Redis is a Redis 7");
      assertEquals(TxStatus.SUCCESS, node.awaitFinal(node.start("one", new JsonObject())).status());
      TestRedis.onEveryServer("FUNCTION", "DELETE", lib.name());
      assertEquals(TxStatus.SUCCESS, node.awaitFinal(node.start("one", new JsonObject())).status(),
          "answered from the scripts' source");
      Eventually.until(Duration.ofSeconds(10), "the library loaded again", () -> libraries(lib.name()).size(),
          n -> n == 1);
      assertEquals(2, steps.recorded.size());
    }
  }
}
