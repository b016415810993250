package io.conveyor.model;

import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A gate at start (issue 33): debounce, throttle or singleton, keyed by an expression over the start's input or
 * metadata (${input.docId}, as flow/await's key). Declared by a pipeline (its file's field of that name) or by
 * one start (the start body's); a start's own gate replaces its pipeline's. start.lua decides it (lib/gate.lua).
 * period and maxWait in ms (maxWait 0: none); limit (throttle) how many starts per period; queue: what happens
 * beyond the limit or while one is live (true: it waits its turn; false: refused).
 */
public record Gate(String kind, String key, long period, long maxWait, int limit, boolean queue) {
  /** The fields that declare a gate, in a start body or a pipeline file; at most one of them. */
  public static final List<String> KINDS = List.of("debounce", "throttle", "singleton");
  private static final Duration LONGEST = Duration.ofDays(366);
  private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}]*)}");
  private static final Pattern NAME = Pattern.compile("(input|metadata)((\\.[A-Za-z0-9_-]+)+)");
  /** The longest key value a gate takes: it becomes part of a Redis key. */
  public static final int MAX_KEY = 256;

  /**
   * The gate a JSON object (a start body or a pipeline file) declares, or null; refuses a bad one naming the field
   * as where + kind + "." + field (where is "" for a start body, "<file>: " for a pipeline file).
   */
  public static Gate of(JsonObject holder, String where) {
    Gate found = null;
    for (String kind : KINDS) {
      Object v = holder.getValue(kind);
      if (v == null) {
        continue;
      }
      if (found != null) {
        throw TxException.invalid(where + kind, "give one of debounce, throttle or singleton, not "
            + found.kind() + " and " + kind);
      }
      if (!(v instanceof JsonObject o)) {
        throw TxException.invalid(where + kind, "expected an object such as {\"key\": \"${input.id}\", ...}");
      }
      found = read(kind, o, where + kind + ".");
    }
    return found;
  }

  private static Gate read(String kind, JsonObject o, String at) {
    Set<String> fields = switch (kind) {
      case "debounce" -> Set.of("key", "period", "maxWait");
      case "throttle" -> Set.of("key", "limit", "period", "onLimit");
      default -> Set.of("key", "onBusy");
    };
    for (String f : o.fieldNames()) {
      if (!fields.contains(f)) {
        throw TxException.invalid(at + f, "unknown field" + Strict.suggestion(f, fields) + "; accepted: "
            + String.join(", ", new java.util.TreeSet<>(fields)));
      }
    }
    String key = template(o.getValue("key"), at + "key");
    long period = kind.equals("singleton") ? 0 : duration(o.getValue("period"), at + "period");
    long maxWait = 0;
    if (o.getValue("maxWait") != null) {
      maxWait = duration(o.getValue("maxWait"), at + "maxWait");
      if (maxWait < period) {
        throw TxException.invalid(at + "maxWait", "at least the period (" + Durations.format(Duration.ofMillis(period))
            + "), got " + o.getValue("maxWait"));
      }
    }
    int limit = 0;
    if (kind.equals("throttle")) {
      Object l = o.getValue("limit");
      if (!(l instanceof Integer n) || n < 1 || n > 100_000) {
        throw TxException.invalid(at + "limit", "expected a whole number from 1 to 100000, got " + l);
      }
      limit = n;
    }
    boolean queue = true;
    String choice = kind.equals("throttle") ? "onLimit" : kind.equals("singleton") ? "onBusy" : null;
    if (choice != null && o.getValue(choice) != null) {
      Object c = o.getValue(choice);
      if (!"queue".equals(c) && !"refuse".equals(c)) {
        throw TxException.invalid(at + choice, "expected queue (the default) or refuse, got " + c);
      }
      queue = "queue".equals(c);
    }
    return new Gate(kind, key, period, maxWait, limit, queue);
  }

  private static String template(Object v, String field) {
    if (!(v instanceof String s) || s.isEmpty() || s.length() > MAX_KEY) {
      throw TxException.invalid(field, "expected an expression such as ${input.docId} (text of at most " + MAX_KEY
          + " characters)");
    }
    Matcher m = PLACEHOLDER.matcher(s);
    boolean any = false;
    while (m.find()) {
      any = true;
      if (!NAME.matcher(m.group(1)).matches()) {
        throw TxException.invalid(field, "unknown placeholder ${" + m.group(1) + "} (expected ${input.<field>} or "
            + "${metadata.<field>})");
      }
    }
    if (!any) {
      throw TxException.invalid(field, "expected at least one ${input.<field>} or ${metadata.<field>}, got " + s);
    }
    return s;
  }

  private static long duration(Object v, String field) {
    if (v == null) {
      throw TxException.invalid(field, "is required (" + Durations.FORM + ")");
    }
    try {
      long ms = Durations.read(field, v, LONGEST).toMillis();
      if (ms <= 0) {
        throw TxException.invalid(field, "must be more than 0, got " + v);
      }
      return ms;
    } catch (IllegalArgumentException e) {
      throw new TxException(TxException.Kind.INVALID_INPUT, e.getMessage(), field, null);
    }
  }

  /**
   * The gate key's value for one start: each placeholder filled from the input or metadata (text as it is,
   * anything else as its JSON); a value the start lacks is refused naming the field.
   */
  public String keyFor(JsonObject input, JsonObject metadata) {
    Matcher m = PLACEHOLDER.matcher(key);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      Matcher n = NAME.matcher(m.group(1));
      n.matches();
      Object v = "input".equals(n.group(1)) ? input : metadata;
      for (String part : n.group(2).substring(1).split("\\.")) {
        v = v instanceof JsonObject o ? o.getValue(part) : null;
      }
      if (v == null) {
        throw TxException.invalid(kind + ".key", "the start's " + m.group(1) + " is missing (the key is " + key + ")");
      }
      m.appendReplacement(out, Matcher.quoteReplacement(v instanceof String s ? s : io.vertx.core.json.Json.encode(v)));
    }
    m.appendTail(out);
    String value = out.toString();
    if (value.length() > MAX_KEY) {
      throw TxException.invalid(kind + ".key", "at most " + MAX_KEY + " characters, got " + value.length());
    }
    String unclean = Identifiers.problem(value);
    if (unclean != null) {
      throw TxException.invalid(kind + ".key", unclean);
    }
    return value;
  }

  /** The declaration, as a pipeline file or start body writes it (the field named kind holds it). */
  public JsonObject toJson() {
    JsonObject j = new JsonObject().put("key", key);
    if (period > 0) {
      j.put("period", Durations.format(Duration.ofMillis(period)));
    }
    if (maxWait > 0) {
      j.put("maxWait", Durations.format(Duration.ofMillis(maxWait)));
    }
    if (kind.equals("throttle")) {
      j.put("limit", limit).put("onLimit", queue ? "queue" : "refuse");
    }
    if (kind.equals("singleton")) {
      j.put("onBusy", queue ? "queue" : "refuse");
    }
    return j;
  }

  /**
   * What start.lua is given for one start with its key's value: {kind, key, period, maxWait, limit, queue}
   * (times in ms), also what the transaction shows as its gate.
   */
  public JsonObject decided(String value) {
    return new JsonObject().put("kind", kind).put("key", value).put("period", period).put("maxWait", maxWait)
        .put("limit", limit).put("queue", queue);
  }
}
