package io.conveyor.api;

import io.conveyor.model.Pipeline;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A pipeline drawn as SVG (GET /api/v1/pipelines/{name}/graph.svg): its steps top to bottom, numbered from 1,
 * each with its type, what it calls and its timeout and retries; the pipelines a step starts (children, parallel
 * branches) to its right, each a link to its own graph; the compensating pipeline (onFailure) below; and the
 * pipeline's counts over the last hour from the stats series, and each step's attempts and p50/p99 durations
 * (StepStats) under its box's text. Every text from the definition is escaped and cut,
 * so a definition cannot break out of the drawing. No script, no external reference: safe inline or as an image.
 */
public final class PipelineGraph {
  static final String CONTENT_TYPE = "image/svg+xml; charset=utf-8";
  private static final int WIDTH = 760;
  private static final int STEP_X = 20;
  private static final int STEP_W = 440;
  private static final int STEP_H = 64;
  private static final int GAP = 26;
  private static final int TOP = 92;
  private static final int CHILD_X = 500;
  private static final int CHILD_W = 240;
  private static final int CHILD_H = 22;
  /** The most characters a line shows (11-13 px text in a 440 px box), and a child box's (240 px). */
  private static final int MAX_TEXT = 72;
  private static final int MAX_CHILD_TEXT = 36;

  private PipelineGraph() {
  }

  /**
   * stored: {version, nodeGroup, definition, disabled} as GET /api/v1/pipelines answers it for one pipeline;
   * lastHour: counter name → sum over the last hour for this pipeline (started, completed, completed.failed…, and
   * the step histograms stepms.<version>.<step>.<bound> that StepStats reads for the version drawn).
   */
  public static String svg(String name, JsonObject stored, Map<String, Long> lastHour) {
    JsonObject def = stored.getJsonObject("definition", new JsonObject());
    JsonArray steps = def.getValue("steps") instanceof JsonArray a ? a : new JsonArray();
    String onFailure = def.getValue("onFailure") instanceof String s ? s : null;
    int height = TOP + steps.size() * (STEP_H + GAP) + (onFailure == null ? 0 : STEP_H + GAP) + 10;
    StringBuilder out = new StringBuilder(2048 + steps.size() * 600);
    out.append("<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"")
        .append(WIDTH).append("\" height=\"").append(height).append("\" viewBox=\"0 0 ").append(WIDTH).append(' ')
        .append(height).append("\" role=\"img\" aria-label=\"").append(text("pipeline " + name)).append("\">\n")
        .append("<title>").append(text("pipeline " + name)).append("</title>\n")
        .append("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
            + "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#444\"/>"
            + "</marker></defs>\n")
        .append("<style>text{font-family:system-ui,sans-serif;font-size:13px;fill:#111}.small{font-size:11px;"
            + "fill:#333}.title{font-size:16px;font-weight:600}rect{stroke:#444;stroke-width:1}</style>\n");
    String version = stored.getString("version", "");
    line(out, 20, 26, "title", name + "  ·  version " + (version.length() > 12 ? version.substring(0, 12) : version)
        + "  ·  group " + def.getString("nodeGroup", stored.getString("nodeGroup", ""))
        + (stored.getBoolean("disabled", false) ? "  ·  DISABLED" : ""));
    if (def.getValue("description") instanceof String d) {
      line(out, 20, 46, "small", d);
    }
    line(out, 20, 66, "small", "last hour: " + counts(lastHour));
    Map<Integer, JsonObject> timed = StepStats.of(lastHour, version);
    for (int i = 0; i < steps.size(); i++) {
      JsonObject step = steps.getValue(i) instanceof JsonObject o ? o : new JsonObject();
      int y = TOP + i * (STEP_H + GAP);
      box(out, STEP_X, y, STEP_W, STEP_H, "#eef3fb", false);
      line(out, STEP_X + 10, y + 20, null, (i + 1) + " · " + step.getString("type", "?"));
      line(out, STEP_X + 10, y + 38, "small", detail(step, def));
      JsonObject t = timed.get(i + 1);
      line(out, STEP_X + 10, y + 55, "small", "last hour: " + (t == null ? "no attempt timed" : StepStats.label(t)));
      if (i + 1 < steps.size()) {
        arrow(out, STEP_X + STEP_W / 2, y + STEP_H, STEP_X + STEP_W / 2, y + STEP_H + GAP);
      }
      children(out, step, y);
    }
    if (onFailure != null) {
      int y = TOP + steps.size() * (STEP_H + GAP);
      box(out, STEP_X, y, STEP_W, STEP_H, "#fdf0e6", true);
      line(out, STEP_X + 10, y + 20, null, "on failure or cancel: compensate with");
      link(out, onFailure, STEP_X + 10, y + 38);
    }
    return out.append("</svg>\n").toString();
  }

  /** The pipelines a step starts, to its right, each a link to its own graph. */
  private static void children(StringBuilder out, JsonObject step, int y) {
    Set<String> kids = new TreeSet<>();
    JsonObject params = step.getValue("params") instanceof JsonObject p ? p : null;
    Pipeline.childrenOf(step.getString("type", ""), params, kids);
    List<String> shown = new ArrayList<>(kids);
    int room = Math.max(1, (STEP_H + GAP - 4) / CHILD_H);
    if (shown.size() > room) {
      int more = shown.size() - room + 1;
      shown = new ArrayList<>(shown.subList(0, room - 1));
      shown.add("… " + more + " more");
    }
    for (int k = 0; k < shown.size(); k++) {
      int cy = y + k * CHILD_H;
      arrow(out, STEP_X + STEP_W, y + STEP_H / 2, CHILD_X, cy + CHILD_H / 2);
      box(out, CHILD_X, cy, CHILD_W, CHILD_H - 3, "#eef8ee", false);
      if (kids.contains(shown.get(k))) {
        link(out, shown.get(k), CHILD_X + 8, cy + 14);
      } else {
        line(out, CHILD_X + 8, cy + 14, "small", cut(shown.get(k), MAX_CHILD_TEXT));
      }
    }
  }

  /** What a step does in one line: what it calls, its timeout, its retries and how it joins branches. */
  static String detail(JsonObject step, JsonObject def) {
    JsonObject p = step.getValue("params") instanceof JsonObject o ? o : new JsonObject();
    List<String> parts = new ArrayList<>();
    for (String key : List.of("address", "url", "pipeline", "forEach", "duration", "switch", "join", "atLeast")) {
      if (p.getValue(key) != null && !(p.getValue(key) instanceof JsonObject) && !(p.getValue(key) instanceof JsonArray)) {
        parts.add(key + " " + p.getValue(key));
      }
    }
    if (p.getValue("branches") instanceof JsonArray b) {
      parts.add(b.size() + " branches");
    }
    Object timeout = step.getValue("timeout") != null ? step.getValue("timeout") : def.getValue("timeout");
    if (timeout != null) {
      parts.add("timeout " + timeout);
    }
    JsonObject retry = step.getValue("retry") instanceof JsonObject r ? r
        : def.getValue("retry") instanceof JsonObject r2 ? r2 : null;
    if (retry != null && retry.getValue("maxAttempts") != null) {
      parts.add("up to " + retry.getValue("maxAttempts") + " attempts");
    }
    return parts.isEmpty() ? "" : String.join(" · ", parts);
  }

  /** "12 started, 10 completed (9 success, 1 failed)", or "nothing" when no counter moved. */
  static String counts(Map<String, Long> lastHour) {
    long started = lastHour.getOrDefault("started", 0L);
    long completed = lastHour.getOrDefault("completed", 0L);
    Map<String, Long> byStatus = new TreeMap<>();
    lastHour.forEach((k, v) -> {
      if (k.startsWith("completed.") && v > 0) {
        byStatus.put(k.substring("completed.".length()), v);
      }
    });
    if (started == 0 && completed == 0) {
      return "nothing started or completed";
    }
    List<String> statuses = new ArrayList<>();
    byStatus.forEach((s, n) -> statuses.add(n + " " + s));
    return started + " started, " + completed + " completed" + (statuses.isEmpty() ? ""
        : " (" + String.join(", ", statuses) + ")");
  }

  private static void box(StringBuilder out, int x, int y, int w, int h, String fill, boolean dashed) {
    out.append("<rect x=\"").append(x).append("\" y=\"").append(y).append("\" width=\"").append(w)
        .append("\" height=\"").append(h).append("\" rx=\"6\" fill=\"").append(fill).append('"')
        .append(dashed ? " stroke-dasharray=\"5 3\"" : "").append("/>\n");
  }

  private static void arrow(StringBuilder out, int x1, int y1, int x2, int y2) {
    out.append("<line x1=\"").append(x1).append("\" y1=\"").append(y1).append("\" x2=\"").append(x2)
        .append("\" y2=\"").append(y2).append("\" stroke=\"#444\" marker-end=\"url(#arrow)\"/>\n");
  }

  private static void line(StringBuilder out, int x, int y, String cssClass, String s) {
    out.append("<text x=\"").append(x).append("\" y=\"").append(y).append('"')
        .append(cssClass == null ? "" : " class=\"" + cssClass + "\"").append('>').append(text(s)).append("</text>\n");
  }

  /** A pipeline's name as a link to its own graph (a sibling path: ../name/graph.svg). */
  private static void link(StringBuilder out, String pipeline, int x, int y) {
    String safe = pipeline.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,127}") ? pipeline : null;
    if (safe == null) {
      line(out, x, y, "small", pipeline);
      return;
    }
    out.append("<a href=\"../").append(safe).append("/graph.svg\" xlink:href=\"../").append(safe)
        .append("/graph.svg\"><text x=\"").append(x).append("\" y=\"").append(y)
        .append("\" class=\"small\" text-decoration=\"underline\">").append(text(cut(pipeline, MAX_CHILD_TEXT)))
        .append("</text></a>\n");
  }

  /** s cut to max characters (code points), the last one then "…". */
  private static String cut(String s, int max) {
    return s.codePointCount(0, s.length()) > max ? s.substring(0, s.offsetByCodePoints(0, max - 1)) + "…" : s;
  }

  /**
   * Text as XML character data: cut to MAX_TEXT characters, &, <, >, quotes escaped, and characters XML 1.0 does
   * not allow (controls, lone surrogates, U+FFFE/U+FFFF) shown as U+FFFD.
   */
  static String text(String s) {
    String cut = cut(s, MAX_TEXT);
    StringBuilder b = new StringBuilder(cut.length() + 16);
    for (int i = 0; i < cut.length(); i++) {
      char c = cut.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < cut.length() && Character.isLowSurrogate(cut.charAt(i + 1))) {
        b.append(c).append(cut.charAt(++i));
        continue;
      }
      switch (c) {
        case '&' -> b.append("&amp;");
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&#39;");
        default -> b.append(c < 0x20 && c != '\t' || Character.isSurrogate(c) || c == 0xFFFE || c == 0xFFFF
            ? '\uFFFD' : c);
      }
    }
    return b.toString();
  }
}
