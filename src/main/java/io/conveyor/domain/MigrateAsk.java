package io.conveyor.domain;

import io.conveyor.model.Strict;
import io.conveyor.model.TxException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A migration as asked and then checked against the pipeline's stored versions: from (the versions to move from;
 * default every stored version but to), to (default the current one), stepMap (old step → new step, both counted
 * from 1 as the API counts steps; default by position when the two have as many steps), dryRun (default true),
 * undo (default false: moves back those still where a migration to `to` put them). Each refusal names its field.
 */
record MigrateAsk(List<String> from, String to, Map<String, int[]> stepMaps, boolean dryRun, boolean undo) {

  /** The body's fields, their types checked. */
  record Raw(List<String> from, String to, Map<Integer, Integer> stepMap, boolean dryRun, boolean undo) {
  }

  static Raw raw(JsonObject b, Set<String> accepted) {
    Strict.fields(b, accepted);
    List<String> from = null;
    Object f = b.getValue("from");
    if (f instanceof String one) {
      from = List.of(one);
    } else if (f instanceof JsonArray list) {
      from = new ArrayList<>();
      for (Object v : list) {
        if (!(v instanceof String s)) {
          throw TxException.invalid("from", "expected a list of versions (text), got " + v);
        }
        from.add(s);
      }
      if (from.isEmpty()) {
        throw TxException.invalid("from", "empty: leave it out to move from every version but to");
      }
    } else if (f != null) {
      throw TxException.invalid("from", "expected a list of versions, got " + f);
    }
    Object to = b.getValue("to");
    if (to != null && !(to instanceof String)) {
      throw TxException.invalid("to", "expected a version (text), got " + to);
    }
    Map<Integer, Integer> stepMap = null;
    Object m = b.getValue("stepMap");
    if (m instanceof JsonObject map) {
      stepMap = new TreeMap<>();
      for (String k : map.fieldNames()) {
        if (!k.matches("[1-9][0-9]{0,3}")) {
          throw TxException.invalid("stepMap", "key " + k + ": expected an old step's number (from 1)");
        }
        if (!(map.getValue(k) instanceof Integer v) || v < 1) {
          throw TxException.invalid("stepMap", "step " + k + ": expected a new step's number (from 1), got "
              + map.getValue(k));
        }
        stepMap.put(Integer.parseInt(k), v);
      }
    } else if (m != null) {
      throw TxException.invalid("stepMap", "expected an object {\"<old step>\": <new step>}, steps from 1");
    }
    boolean dryRun = flag(b, "dryRun", true);
    boolean undo = flag(b, "undo", false);
    if (undo && (from != null || stepMap != null)) {
      throw TxException.invalid(from != null ? "from" : "stepMap", "an undo takes only to (and dryRun): it moves "
          + "each transaction back to the version and step it came from");
    }
    return new Raw(from, (String) to, stepMap, dryRun, undo);
  }

  private static boolean flag(JsonObject b, String field, boolean otherwise) {
    Object v = b.getValue(field, otherwise);
    if (!(v instanceof Boolean t)) {
      throw TxException.invalid(field, "expected true or false, got " + v);
    }
    return t;
  }

  /** The ask against the pipeline's versions (version → {definition, publishedAt}) and its current version. */
  static MigrateAsk resolve(String name, Raw raw, String current, Map<String, JsonObject> versions) {
    String to = raw.to() != null ? raw.to() : current;
    if (to == null) {
      throw TxException.invalid("to", "pipeline " + name + " has no current version (deleted): name the version");
    }
    known(name, "to", to, versions);
    JsonObject target = definition(versions.get(to));
    int steps = steps(target);
    List<String> from = new ArrayList<>();
    if (raw.from() != null) {
      for (String v : raw.from()) {
        known(name, "from", v, versions);
        if (v.equals(to)) {
          throw TxException.invalid("from", "version " + v + " is the version to move to");
        }
        from.add(v);
      }
    } else {
      versions.keySet().stream().filter(v -> !v.equals(to)).sorted().forEach(from::add);
    }
    Map<String, int[]> maps = new LinkedHashMap<>();
    if (!raw.undo()) {
      for (String v : from) {
        JsonObject old = definition(versions.get(v));
        String group = old.getString("nodeGroup");
        if (group != null && !group.equals(target.getString("nodeGroup"))) {
          throw TxException.invalid("from", "version " + v + " runs in node group " + group + ", version " + to
              + " in " + target.getString("nodeGroup") + ": a migration keeps the group");
        }
        maps.put(v, map(v, steps(old), to, steps, raw.stepMap(), raw.from() != null));
      }
      if (raw.stepMap() != null) {
        int most = from.stream().mapToInt(v -> steps(definition(versions.get(v)))).max().orElse(0);
        raw.stepMap().forEach((k, v) -> {
          if (k > most) {
            throw TxException.invalid("stepMap", "old step " + k + " is out of range: the versions moved from "
                + "have at most " + most + " steps");
          }
          if (v > steps) {
            throw TxException.invalid("stepMap", "step " + k + " → " + v + " is out of range: version " + to
                + " has " + steps + " steps");
          }
        });
      }
    }
    return new MigrateAsk(List.copyOf(from), to, maps, raw.dryRun(), raw.undo());
  }

  /**
   * The new index (0-based) of each old step, -1 where none: by position overlaid by stepMap when both have as many
   * steps; else only what stepMap names (none given: refused when from was named, else nothing of it moves).
   */
  private static int[] map(String v, int oldSteps, String to, int steps, Map<Integer, Integer> stepMap,
                           boolean named) {
    int[] m = new int[oldSteps];
    boolean same = oldSteps == steps;
    if (!same && stepMap == null && named) {
      throw TxException.invalid("stepMap", "version " + v + " has " + oldSteps + " steps and version " + to + " has "
          + steps + ": give a stepMap {\"<old step>\": <new step>} (steps from 1) for the steps transactions may "
          + "stand at");
    }
    for (int i = 0; i < oldSteps; i++) {
      m[i] = same ? i : -1;
      if (stepMap != null && stepMap.containsKey(i + 1)) {
        m[i] = stepMap.get(i + 1) - 1;
      }
    }
    return m;
  }

  private static void known(String name, String field, String v, Map<String, JsonObject> versions) {
    if (!versions.containsKey(v)) {
      throw TxException.invalid(field, "pipeline " + name + " has no version " + v + Strict.suggestion(v,
          versions.keySet()) + " (GET /api/v1/pipelines/" + name + "/versions lists them)");
    }
  }

  private static JsonObject definition(JsonObject stored) {
    try {
      return new JsonObject(stored.getString("definition"));
    } catch (RuntimeException e) {
      return new JsonObject();
    }
  }

  private static int steps(JsonObject def) {
    return def.getValue("steps") instanceof JsonArray s ? s.size() : 0;
  }

  String mode() {
    return undo ? "undo" : dryRun ? "dry" : "apply";
  }

  /** {fromVersion: [new index per old step]} for migrate.lua; {} for an undo. */
  JsonObject maps() {
    JsonObject out = new JsonObject();
    stepMaps.forEach((v, m) -> {
      JsonArray a = new JsonArray();
      for (int i : m) {
        a.add(i);
      }
      out.put(v, a);
    });
    return out;
  }

  /** {fromVersion: {"<old step>": new step or null}}, steps from 1: what the answer shows. */
  JsonObject stepMapView() {
    JsonObject out = new JsonObject();
    stepMaps.forEach((v, m) -> {
      JsonObject one = new JsonObject();
      for (int i = 0; i < m.length; i++) {
        one.put(Integer.toString(i + 1), m[i] < 0 ? null : m[i] + 1);
      }
      out.put(v, one);
    });
    return out;
  }
}
