package io.conveyor.model;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * How a summary shows payloads that stayed sealed (their owner's data key was shredded, or this node lacks the
 * master key): "sealed": true and no payload, never the sealed text. What opened is shown as it is. The forms are
 * crypto.Payloads' (an object's envelope holds "$sealed"; a sealed text starts with "sealed:"), named here since
 * the model depends on no other package.
 */
final class SealedView {
  private SealedView() {
  }

  static JsonObject hide(JsonObject j) {
    boolean sealed = false;
    for (String f : new String[] {"metadata", "output"}) {
      if (j.getValue(f) instanceof JsonObject o && o.containsKey("$sealed")) {
        j.putNull(f);
        sealed = true;
      }
    }
    if (sealedText(j.getValue("note"))) {
      j.remove("note");
      sealed = true;
    }
    if (j.getValue("errors") instanceof JsonArray errors) {
      sealed |= hideMessages(errors);
    }
    if (j.getValue("retry") instanceof JsonObject r && r.getValue("lastError") instanceof JsonObject e) {
      sealed |= hideMessages(new JsonArray().add(e));
    }
    if (j.getValue("runs") instanceof JsonArray runs) {
      for (Object r : runs) {
        if (r instanceof JsonObject run && sealedText(run.getValue("note"))) {
          run.remove("note");
          sealed = true;
        }
      }
    }
    return sealed ? j.put("sealed", true) : j;
  }

  private static boolean hideMessages(JsonArray errors) {
    boolean sealed = false;
    for (Object e : errors) {
      if (e instanceof JsonObject o && sealedText(o.getValue("message"))) {
        o.remove("message");
        sealed = true;
      }
    }
    return sealed;
  }

  private static boolean sealedText(Object v) {
    return v instanceof String s && s.startsWith("sealed:");
  }
}
