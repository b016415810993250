package io.conveyor.model;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A pipeline definition; its version is a hash of its canonical JSON, so equal definitions share it. retry is
 * the policy of steps without their own (null: none); onFailure (or null) the pipeline that compensates a
 * transaction of this one that failed or was cancelled; priority (0-9) that of its starts that name none;
 * rateLimit (or null) how many of its transactions may be taken per second, minute or hour ("100/s");
 * maxConcurrency (0: no cap) how many of its transactions may run at once across the cluster. startOn (or null)
 * names a business event that starts a transaction of it when no step waits for it (signal-with-start). gate (or
 * null) debounces, throttles or makes a singleton of its starts (Gate; a start's own gate replaces it).
 */
public record Pipeline(String name, String nodeGroup, boolean transactionType, String description,
                       Duration timeout, RetryPolicy retry, String onFailure, int priority, String rateLimit,
                       int maxConcurrency, List<StepDef> steps, String startOn, Gate gate) {

  /** What a rate limit looks like: a count from 1 to 9999999 per second, minute or hour ("100/s"). */
  public static final String RATE_LIMIT = "[1-9][0-9]{0,6}/[smh]";

  /** rateLimit as transactions per second (0: none). */
  public double ratePerSecond() {
    return rateLimit == null ? 0 : perSecond(rateLimit);
  }

  /** A rate limit such as "100/s", "30/m" or "500/h" (RATE_LIMIT), as transactions per second. */
  public static double perSecond(String rateLimit) {
    int slash = rateLimit.indexOf('/');
    double n = Double.parseDouble(rateLimit.substring(0, slash));
    return switch (rateLimit.substring(slash + 1)) {
      case "s" -> n;
      case "m" -> n / 60;
      default -> n / 3600;
    };
  }

  /** The definition in a fixed field order: what is stored in Redis and hashed into the version. */
  public JsonObject toJson() {
    JsonArray s = new JsonArray();
    for (StepDef d : steps) {
      JsonObject j = new JsonObject().put("type", d.type()).put("params", d.params());
      if (d.timeout() != null) {
        j.put("timeout", Durations.format(d.timeout()));
      }
      if (d.retry() != null) {
        j.put("retry", d.retry().toJson());
      }
      if (!d.idempotent()) {
        j.put("idempotent", false); // only when set: the versions of pipelines that do not say stay as they were
      }
      s.add(j);
    }
    JsonObject j = new JsonObject().put("name", name).put("nodeGroup", nodeGroup)
        .put("transactionType", transactionType);
    if (description != null) {
      j.put("description", description);
    }
    if (timeout != null) {
      j.put("timeout", Durations.format(timeout));
    }
    if (retry != null) {
      j.put("retry", retry.toJson());
    }
    if (onFailure != null) {
      j.put("onFailure", onFailure);
    }
    if (priority != 0) {
      j.put("priority", priority);
    }
    if (rateLimit != null) {
      j.put("rateLimit", rateLimit);
    }
    if (maxConcurrency != 0) {
      j.put("maxConcurrency", maxConcurrency);
    }
    if (startOn != null) {
      j.put("startOn", new JsonObject().put("event", startOn));
    }
    if (gate != null) {
      j.put(gate.kind(), gate.toJson());
    }
    return j.put("steps", s);
  }

  /** The gate as pipelineH field gate holds it ({"<kind>": {...}}, what start.lua compares), or "" for none. */
  public String gateText() {
    return gate == null ? "" : new JsonObject().put(gate.kind(), gate.toJson()).encode();
  }

  public String version() {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(toJson().encode().getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The pipelines this one names: its onFailure, util/child-pipeline steps' pipeline, map values and default, and
   * flow/parallel steps' pipeline and branches.
   */
  public Set<String> references() {
    Set<String> out = new TreeSet<>(children());
    if (onFailure != null) {
      out.add(onFailure);
    }
    return out;
  }

  /** The pipelines its steps may start as children or branches (not its onFailure: a compensation is a root). */
  public Set<String> children() {
    Set<String> out = new TreeSet<>();
    for (StepDef d : steps) {
      childrenOf(d.type(), d.params(), out);
    }
    return out;
  }

  /** Adds the pipelines a step of this type and params may start (none for other step types) to out. */
  public static void childrenOf(String type, JsonObject params, Set<String> out) {
    JsonObject p = params == null ? new JsonObject() : params;
    if (type.equals("util/child-pipeline") || type.equals("flow/parallel")) {
      for (String field : List.of("pipeline", "default")) {
        if (p.getValue(field) instanceof String name) {
          out.add(name);
        }
      }
      if (p.getValue("map") instanceof JsonObject map) {
        map.forEach(e -> {
          if (e.getValue() instanceof String name) {
            out.add(name);
          }
        });
      }
      if (p.getValue("branches") instanceof JsonArray branches) {
        branches.forEach(b -> {
          if (b instanceof JsonObject o && o.getValue("pipeline") instanceof String name) {
            out.add(name);
          }
        });
      }
    }
  }

  /** The retry policy of step i: its own, else the pipeline's, else none. */
  public RetryPolicy retryPolicy(int i) {
    RetryPolicy own = steps.get(i).retry();
    return own != null ? own : retry != null ? retry : RetryPolicy.NONE;
  }

  /** The timeout of step i: its own, else the pipeline's, else the node's default. */
  public Duration stepTimeout(int i, Duration fallback) {
    Duration own = steps.get(i).timeout();
    return own != null ? own : timeout != null ? timeout : fallback;
  }
}
