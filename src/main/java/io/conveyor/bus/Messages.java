package io.conveyor.bus;

import io.vertx.core.json.JsonObject;

/**
 * The one codec of Conveyor's event-bus messages: a record goes on the bus as the JSON object Jackson maps
 * it to, and comes off as the same record. JSON, not a binary codec, so clients of the TCP and SockJS
 * bridges and other languages read the same messages as Java listeners.
 */
public final class Messages {
  private Messages() {
  }

  public static JsonObject encode(Record message) {
    return JsonObject.mapFrom(message);
  }

  /** The record in a message body; IllegalArgumentException when the body is not one. */
  public static <T extends Record> T decode(Object body, Class<T> type) {
    if (!(body instanceof JsonObject json)) {
      throw new IllegalArgumentException("expected a JSON object for " + type.getSimpleName() + ", got " + body);
    }
    return json.mapTo(type);
  }
}
