package io.conveyor.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Cycles among child pipelines are found through child-pipeline maps and defaults and parallel branches. */
class ChildCyclesTest {

  private static JsonObject known(String json) {
    return new JsonObject(json.replace('\'', '"'));
  }

  @Test
  void children_are_read_from_the_pipeline_map_default_and_branches_but_not_on_failure() {
    JsonObject definition = known("{'onFailure':'undo','steps':[{'type':'util/fixed-reply','params':{'reply':{}}},"
        + "{'type':'util/child-pipeline','params':{'field':'kind','map':{'x':'m1'},'default':'d1'}},"
        + "{'type':'flow/parallel','params':{'branches':[{'pipeline':'b1'},{'pipeline':'b2'}]}},"
        + "{'type':'flow/parallel','params':{'forEach':'items','pipeline':'each'}}]}");
    assertEquals(Set.of("m1", "d1", "b1", "b2", "each"), ChildCycles.children(definition));
  }

  @Test
  void a_cycle_through_a_pipeline_is_named_from_it_back_to_it_by_its_shortest_path() {
    Map<String, Set<String>> graph = ChildCycles.graph(known("{"
        + "'a':{'definition':{'steps':[{'type':'util/child-pipeline','params':{'pipeline':'b'}}]}},"
        + "'b':{'definition':{'steps':[{'type':'flow/parallel','params':{'branches':[{'pipeline':'c'},"
        + "{'pipeline':'a'}]}}]}},"
        + "'c':{'definition':{'steps':[{'type':'util/child-pipeline','params':{'pipeline':'a'}}]}},"
        + "'self':{'definition':{'steps':[{'type':'util/child-pipeline','params':{'default':'self'}}]}},"
        + "'leaf':{'definition':{'steps':[]}}}"));
    assertEquals("a → b → a", ChildCycles.through("a", graph));
    assertEquals("c → a → b → c", ChildCycles.through("c", graph));
    assertEquals("self → self", ChildCycles.through("self", graph));
    assertNull(ChildCycles.through("leaf", graph));
    assertEquals(Set.of("a → b → a", "self → self"), ChildCycles.through(List.of("a", "b", "self", "leaf"), graph));
  }

  @Test
  void children_that_end_in_pipelines_not_published_make_no_cycle() {
    Map<String, Set<String>> graph = ChildCycles.graph(known(
        "{'a':{'definition':{'steps':[{'type':'util/child-pipeline','params':{'pipeline':'ghost'}}]}}}"));
    assertNull(ChildCycles.through("a", graph));
  }
}
