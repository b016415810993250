package io.conveyor.pipeline;

import io.conveyor.model.Durations;
import io.conveyor.model.Gate;
import io.conveyor.model.Identifiers;
import io.conveyor.model.Pipeline;
import io.conveyor.model.RetryPolicy;
import io.conveyor.model.StepDef;
import io.conveyor.model.TxException;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/** Reads and checks pipeline definitions; step params are checked here by their step type, not at run time. */
public final class PipelineParser {
  private static final Set<String> FIELDS = Set.of("name", "nodeGroup", "transactionType", "description", "timeout",
      "retry", "onFailure", "priority", "rateLimit", "maxConcurrency", "steps", "startOn", "debounce", "throttle",
      "singleton", "rollout");
  private static final Set<String> STEP_FIELDS = Set.of("type", "params", "timeout", "retry", "idempotent");
  private static final String NAME = "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}";
  private final StepRegistry registry;

  public PipelineParser(StepRegistry registry) {
    this.registry = registry;
  }

  /** Every *.json file in a directory, in name order. */
  public List<CompiledPipeline> loadDir(Path dir) {
    if (!Files.isDirectory(dir)) {
      throw new PipelineException("pipelines.dir " + dir + ": not a directory");
    }
    try (Stream<Path> files = Files.list(dir)) {
      List<CompiledPipeline> out = new ArrayList<>();
      for (Path f : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
        out.add(loadFile(f));
      }
      return out;
    } catch (IOException e) {
      throw new PipelineException("pipelines.dir " + dir + ": cannot list it (" + e.getMessage() + ")");
    }
  }

  public CompiledPipeline loadFile(Path file) {
    try {
      return parse(new JsonObject(Files.readString(file)), file.toString())
          .withModified(Files.getLastModifiedTime(file).toMillis());
    } catch (IOException e) {
      throw new PipelineException(file + ": cannot read it (" + e.getMessage() + ")");
    } catch (DecodeException | ClassCastException e) {
      throw new PipelineException(file + ": not a JSON object (" + e.getMessage().lines().findFirst().orElse("")
          + ")");
    }
  }

  /** Checks a definition; source names it in messages (a file path, or "upload"). */
  public CompiledPipeline parse(JsonObject json, String source) {
    unknownFields(json, FIELDS, source + ": ");
    String name = text(json, "name", NAME, source + ": name");
    String group = text(json, "nodeGroup", NAME, source + ": nodeGroup");
    Object startable = json.getValue("transactionType", false);
    if (!(startable instanceof Boolean)) {
      throw new PipelineException(source + ": transactionType: expected true or false");
    }
    Object description = json.getValue("description");
    if (description != null && !(description instanceof String)) {
      throw new PipelineException(source + ": description: expected a string");
    }
    Duration timeout = duration(json, source + ": timeout");
    RetryPolicy retry = retry(json, source + ": retry");
    String onFailure = json.containsKey("onFailure") ? text(json, "onFailure", NAME, source + ": onFailure") : null;
    if (name.equals(onFailure)) {
      throw new PipelineException(source + ": onFailure: a pipeline cannot compensate itself");
    }
    Object priority = json.getValue("priority", 0);
    if (!(priority instanceof Integer level) || level < 0 || level > 9) {
      throw new PipelineException(source + ": priority: expected a whole number from 0 to 9, got " + priority);
    }
    Object rate = json.getValue("rateLimit");
    if (rate != null && !(rate instanceof String r && r.matches(Pipeline.RATE_LIMIT))) {
      throw new PipelineException(source + ": rateLimit: expected a count per second, minute or hour such as "
          + "\"100/s\" or \"30/m\" (1 to 9999999), got " + rate);
    }
    Object cap = json.getValue("maxConcurrency", 0);
    if (!(cap instanceof Integer c) || c < 0 || c > 1_000_000) {
      throw new PipelineException(source + ": maxConcurrency: expected how many may run at once, a whole number "
          + "from 1 to 1000000 (0 or absent: no cap), got " + cap);
    }
    Object rawSteps = json.getValue("steps");
    if (!(rawSteps instanceof JsonArray steps) || steps.isEmpty()) {
      throw new PipelineException(source + ": steps: expected a non-empty list of steps");
    }
    List<StepDef> defs = new ArrayList<>();
    List<Step> created = new ArrayList<>();
    for (int i = 0; i < steps.size(); i++) {
      step(steps.getValue(i), i, source, defs, created);
    }
    Pipeline p = new Pipeline(name, group, (Boolean) startable, (String) description, timeout, retry,
        onFailure, (Integer) priority, (String) rate, (Integer) cap, List.copyOf(defs),
        startOn(json, (Boolean) startable, source + ": startOn"), gate(json, (Boolean) startable, source));
    return new CompiledPipeline(p, p.version(), List.copyOf(created), 0, rollout(json, (Boolean) startable,
        source + ": rollout"));
  }

  /** "rollout": {"share": 1-99} (how it is published, not part of the version); 0 when absent. */
  private static int rollout(JsonObject json, boolean startable, String where) {
    Object v = json.getValue("rollout");
    if (v == null) {
      return 0;
    }
    if (!(v instanceof JsonObject r)) {
      throw new PipelineException(where + ": expected {\"share\": 1 to 99}");
    }
    unknownFields(r, Set.of("share"), where + ": ");
    if (!startable) {
      throw new PipelineException(where + ": only a transaction type (transactionType true) takes starts to share");
    }
    Object share = r.getValue("share");
    if (!(share instanceof Integer n) || n < 1 || n > 99) {
      throw new PipelineException(where + ".share: expected the percent of new starts the new version takes, a whole "
          + "number from 1 to 99, got " + share);
    }
    return n;
  }

  /** debounce, throttle or singleton (model/Gate): at most one, on a transaction type only; null when absent. */
  private static Gate gate(JsonObject json, boolean startable, String source) {
    Gate g;
    try {
      g = Gate.of(json, source + ": ");
    } catch (TxException e) {
      throw new PipelineException(e.getMessage());
    }
    if (g != null && !startable) {
      throw new PipelineException(source + ": " + g.kind() + ": only a transaction type (transactionType: true) "
          + "gates its starts");
    }
    if (g != null && json.getValue("startOn") != null) {
      throw new PipelineException(source + ": " + g.kind() + ": a pipeline that starts on an event (startOn) takes "
          + "no gate: its starts are placed by their event's externalId (docs/decisions.md, \"Gates at start\")");
    }
    return g;
  }

  /** startOn {"event": name}: the business event that starts a transaction of this type; null when absent. */
  private static String startOn(JsonObject json, boolean startable, String where) {
    Object raw = json.getValue("startOn");
    if (raw == null) {
      return null;
    }
    if (!(raw instanceof JsonObject o) || !(o.getValue("event") instanceof String event)
        || !event.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}") || o.size() != 1) {
      throw new PipelineException(where + ": expected {\"event\": <event name of letters, digits, _ . ->}");
    }
    if (!startable) {
      throw new PipelineException(where + ": only a transaction type (transactionType: true) can start on an event");
    }
    return event;
  }

  private void step(Object raw, int i, String source, List<StepDef> defs, List<Step> created) {
    String where = source + ": step " + (i + 1);
    if (!(raw instanceof JsonObject s)) {
      throw new PipelineException(where + ": expected an object with type and params");
    }
    unknownFields(s, STEP_FIELDS, where + ": ");
    Object type = s.getValue("type");
    if (!(type instanceof String t) || t.isBlank()) {
      throw new PipelineException(where + ": type: expected a step type name");
    }
    where = where + " (" + t + ")";
    Object params = s.getValue("params", new JsonObject());
    if (!(params instanceof JsonObject p)) {
      throw new PipelineException(where + ": params: expected a JSON object");
    }
    Duration timeout = duration(s, where + ": timeout");
    RetryPolicy retry = retry(s, where + ": retry");
    Object idempotent = s.getValue("idempotent", true);
    if (!(idempotent instanceof Boolean)) {
      throw new PipelineException(where + ": idempotent: expected true or false (false: never run again after a "
          + "takeover, end maybe-ran instead), got " + idempotent);
    }
    try {
      created.add(registry.create(t, p));
    } catch (IllegalArgumentException e) {
      throw new PipelineException(where + ": " + e.getMessage());
    }
    defs.add(new StepDef(t, p, timeout, retry, (Boolean) idempotent));
  }

  private static RetryPolicy retry(JsonObject json, String where) {
    Object v = json.getValue("retry");
    if (v == null) {
      return null;
    }
    try {
      return RetryPolicy.parse(v);
    } catch (IllegalArgumentException e) {
      // "maxAttempts: ..." reads as retry.maxAttempts; "expected ..." and "unknown field ..." as retry: ...
      String m = e.getMessage();
      throw new PipelineException(where + (m.matches("^[a-zA-Z]+: .*") ? "." : ": ") + m);
    }
  }

  private static void unknownFields(JsonObject json, Set<String> known, String where) {
    for (String f : json.fieldNames()) {
      if (!known.contains(f)) {
        throw new PipelineException(where + "unknown field '" + f + "' (expected " + String.join(", ",
            new TreeSet<>(known)) + ")");
      }
    }
  }

  private static String text(JsonObject json, String field, String pattern, String where) {
    Object v = json.getValue(field);
    String problem = v instanceof String s ? Identifiers.problem(s) : null;
    if (problem != null) {
      throw new PipelineException(where + ": " + problem);
    }
    if (!(v instanceof String s) || !s.matches(pattern)) {
      throw new PipelineException(where + ": expected a name of letters, digits, '_', '.' or '-' (at most 64)");
    }
    return s;
  }

  private static Duration duration(JsonObject json, String where) {
    Object v = json.getValue("timeout");
    if (v == null) {
      return null;
    }
    try {
      Duration d = Durations.parse(v instanceof String s ? s : null);
      if (d.isZero()) {
        throw new IllegalArgumentException("expected more than 0ms");
      }
      return d;
    } catch (IllegalArgumentException e) {
      throw new PipelineException(where + ": " + e.getMessage());
    }
  }
}
