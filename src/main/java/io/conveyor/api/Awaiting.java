package io.conveyor.api;

import io.conveyor.pipeline.StepContext;
import io.conveyor.pipeline.steps.FlowAwaitStep;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;

/**
 * What a sleeping transaction waits for, as the admin detail answers it (awaiting): a business event (its flow/await
 * step's event name and key, rendered from the step's input as the step rendered it, its owner, timeout and
 * onTimeout), or a switch (util/wait, or any step that sleeps on one); with the step (from 1) and the deadline, when
 * it wakes at the latest. The console shows it and offers to send the event (POST /api/v1/events) or set the switch.
 */
final class Awaiting {
  private Awaiting() {
  }

  /** fields: the transaction's stateH; definition: its pipeline version's JSON; wakeAt: its sleepingZ score. */
  static JsonObject of(String txId, JsonObject fields, String definition, Long wakeAt) {
    String waiting = fields.getString("waitingSwitch", "");
    if (!"sleeping".equals(fields.getString("processingState")) || !"running".equals(fields.getString("status"))
        || waiting.isEmpty() || definition == null) {
      return null;
    }
    int step = Integer.parseInt(fields.getString("step", "0"));
    JsonArray steps = new JsonObject(definition).getJsonArray("steps", new JsonArray());
    JsonObject def = step < steps.size() && steps.getValue(step) instanceof JsonObject o ? o : new JsonObject();
    JsonObject out = new JsonObject().put("step", step + 1).put("stepType", def.getString("type"))
        .put("deadline", wakeAt == null ? null : Instant.ofEpochMilli(wakeAt).toString());
    JsonObject params = def.getValue("params") instanceof JsonObject p ? p : new JsonObject();
    if (!"flow/await".equals(def.getString("type")) || !waiting.equals(FlowAwaitStep.switchName(step))) {
      return out.put("kind", "switch").put("switch", waiting);
    }
    out.put("kind", "event").put("event", params.getString("event")).put("owner", fields.getString("owner"))
        .put("timeout", String.valueOf(params.getValue("timeout", "1d")))
        .put("onTimeout", params.getString("onTimeout", "fail"));
    try {
      out.put("key", FlowAwaitStep.keyOf(params, context(txId, fields, step)));
    } catch (RuntimeException e) {
      out.put("keyProblem", e.getMessage());
    }
    return out;
  }

  /** The step's context as far as a key template reads it: ids, the step's input and the metadata. */
  private static StepContext context(String txId, JsonObject fields, int step) {
    JsonObject input = object(fields.getString("data", fields.getString("input")));
    return new StepContext(txId, fields.getString("owner"), fields.getString("externalId", ""),
        Long.parseLong(fields.getString("attempt", "0")), step, "flow/await", input,
        object(fields.getString("metadata")), null, null, 0, Integer.parseInt(fields.getString("stepAttempt", "1")),
        new JsonObject(), null, null, null, null, null, Integer.parseInt(fields.getString("run", "1")), true);
  }

  private static JsonObject object(String json) {
    try {
      return json == null || json.isEmpty() ? new JsonObject() : new JsonObject(json);
    } catch (RuntimeException e) {
      return new JsonObject();
    }
  }
}
