package io.conveyor.pipeline;

import io.conveyor.model.Pipeline;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Cycles among child pipelines (util/child-pipeline and flow/parallel steps): a → b → a. An upload that closes
 * one is accepted with a warning, since a recursion that ends by itself (a countdown) is legal; one that does
 * not is stopped by limits.maxDepth (README, Runaway trees).
 */
public final class ChildCycles {
  private ChildCycles() {
  }

  /** The pipelines a stored definition's steps may start as children or branches. */
  public static Set<String> children(JsonObject definition) {
    Set<String> out = new TreeSet<>();
    JsonArray steps = definition.getValue("steps") instanceof JsonArray a ? a : new JsonArray();
    for (Object step : steps) {
      if (step instanceof JsonObject s && s.getValue("type") instanceof String type) {
        Pipeline.childrenOf(type, s.getValue("params") instanceof JsonObject p ? p : null, out);
      }
    }
    return out;
  }

  /** The graph of every pipeline in known (GET /api/v1/pipelines: {name: {definition}}): name → children. */
  public static Map<String, Set<String>> graph(JsonObject known) {
    Map<String, Set<String>> graph = new HashMap<>();
    known.forEach(e -> graph.put(e.getKey(), e.getValue() instanceof JsonObject p
        && p.getValue("definition") instanceof JsonObject d ? children(d) : Set.of()));
    return graph;
  }

  /** The shortest cycle through name, as "name → … → name", or null when there is none. */
  public static String through(String name, Map<String, Set<String>> graph) {
    Map<String, String> cameFrom = new HashMap<>();
    Deque<String> next = new ArrayDeque<>(List.of(name));
    while (!next.isEmpty()) {
      String at = next.poll();
      for (String child : graph.getOrDefault(at, Set.of())) {
        if (child.equals(name)) {
          List<String> path = new ArrayList<>(List.of(name));
          for (String p = at; !p.equals(name); p = cameFrom.get(p)) {
            path.add(1, p);
          }
          path.add(name);
          return String.join(" → ", path);
        }
        if (!cameFrom.containsKey(child)) {
          cameFrom.put(child, at);
          next.add(child);
        }
      }
    }
    return null;
  }

  /** The cycles through any of names, each once (a cycle through two of them is named once). */
  public static Set<String> through(Iterable<String> names, Map<String, Set<String>> graph) {
    Set<String> out = new LinkedHashSet<>();
    Set<String> covered = new TreeSet<>();
    for (String name : names) {
      String cycle = covered.contains(name) ? null : through(name, graph);
      if (cycle != null) {
        out.add(cycle);
        covered.addAll(List.of(cycle.split(" → ")));
      }
    }
    return out;
  }
}
