package io.conveyor.model;

import io.conveyor.config.Durations;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

/** A pipeline definition; its version is a hash of its canonical JSON, so equal definitions share it. */
public record Pipeline(String name, String nodeGroup, boolean transactionType, String description,
                       Duration timeout, List<StepDef> steps) {

  /** The definition in a fixed field order: what is stored in Redis and hashed into the version. */
  public JsonObject toJson() {
    JsonArray s = new JsonArray();
    for (StepDef d : steps) {
      JsonObject j = new JsonObject().put("type", d.type()).put("params", d.params());
      if (d.timeout() != null) {
        j.put("timeout", Durations.format(d.timeout()));
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
    return j.put("steps", s);
  }

  public String version() {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(toJson().encode().getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The timeout of step i: its own, else the pipeline's, else the node's default. */
  public Duration stepTimeout(int i, Duration fallback) {
    Duration own = steps.get(i).timeout();
    return own != null ? own : timeout != null ? timeout : fallback;
  }
}
