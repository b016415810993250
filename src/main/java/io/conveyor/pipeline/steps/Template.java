package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.StepContext;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Text with placeholders filled from a running step: ${txId}, ${owner}, ${externalId}, ${step},
 * ${stepAttempt}, ${input.a.b} and ${metadata.a.b} (a path of field names into the step's input or the
 * transaction's metadata). Names are checked when the pipeline is loaded; a value the input lacks fails the
 * step when it runs (Missing).
 */
final class Template {
  private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}]*)}");
  private static final Pattern NAME = Pattern.compile(
      "txId|owner|externalId|step|stepAttempt|(input|metadata)(\\.[A-Za-z0-9_-]+)+");
  private final String text;

  /** A value the running step does not have. */
  static final class Missing extends RuntimeException {
    Missing(String message) {
      super(message, null, false, false);
    }
  }

  private Template(String text) {
    this.text = text;
  }

  /** A template, its placeholders checked; where names the param in a refusal. */
  static Template of(String text, String where) {
    Matcher m = PLACEHOLDER.matcher(text);
    while (m.find()) {
      if (!NAME.matcher(m.group(1)).matches()) {
        throw new IllegalArgumentException(where + ": unknown placeholder ${" + m.group(1) + "} (expected ${txId}, "
            + "${owner}, ${externalId}, ${step}, ${stepAttempt}, ${input.<field>} or ${metadata.<field>})");
      }
    }
    return new Template(text);
  }

  /** Checks every string in a JSON template (an object, array or string), as of does. */
  static void check(Object json, String where) {
    if (json instanceof String s) {
      of(s, where);
    } else if (json instanceof JsonObject o) {
      o.forEach(e -> check(e.getValue(), where + "." + e.getKey()));
    } else if (json instanceof JsonArray a) {
      for (int i = 0; i < a.size(); i++) {
        check(a.getValue(i), where + "[" + i + "]");
      }
    }
  }

  /** The text with its placeholders filled; in a URL each value is percent-encoded. */
  String render(StepContext ctx, boolean url) {
    Matcher m = PLACEHOLDER.matcher(text);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String v = String.valueOf(value(m.group(1), ctx));
      m.appendReplacement(out, Matcher.quoteReplacement(url
          ? URLEncoder.encode(v, StandardCharsets.UTF_8).replace("+", "%20") : v));
    }
    m.appendTail(out);
    return out.toString();
  }

  /**
   * A JSON template filled: a string that is one placeholder alone takes the value itself (an object, a
   * number, …); other strings are rendered as text.
   */
  static Object fill(Object json, StepContext ctx) {
    if (json instanceof String s) {
      Matcher whole = PLACEHOLDER.matcher(s);
      return whole.matches() ? value(whole.group(1), ctx) : new Template(s).render(ctx, false);
    }
    if (json instanceof JsonObject o) {
      JsonObject out = new JsonObject();
      o.forEach(e -> out.put(e.getKey(), fill(e.getValue(), ctx)));
      return out;
    }
    if (json instanceof JsonArray a) {
      List<Object> out = new ArrayList<>();
      a.forEach(v -> out.add(fill(v, ctx)));
      return new JsonArray(out);
    }
    return json;
  }

  private static Object value(String name, StepContext ctx) {
    Object v = switch (name) {
      case "txId" -> ctx.txId();
      case "owner" -> ctx.owner();
      case "externalId" -> ctx.externalId();
      case "step" -> ctx.step() + 1;
      case "stepAttempt" -> ctx.stepAttempt();
      default -> path(name.startsWith("input.") ? ctx.input() : ctx.metadata(), name);
    };
    if (v == null) {
      throw new Missing("${" + name + "} has no value in this transaction");
    }
    return v;
  }

  private static Object path(JsonObject root, String name) {
    String[] parts = name.split("\\.");
    Object at = root;
    for (int i = 1; i < parts.length && at != null; i++) {
      at = at instanceof JsonObject o ? o.getValue(parts[i]) : null;
    }
    return at;
  }
}
