package io.conveyor.model;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Set;

/**
 * A validated request to start a transaction; metadata and input are kept as the JSON text Redis stores.
 * startAt or delay (or neither) ask for a delayed start: the transaction is scheduled until then. priority (0-9,
 * or null for the pipeline's) orders it in its group's in-queue.
 */
public record StartRequest(String type, String owner, String externalId, JsonObject metadata, JsonObject input,
                           String metadataJson, String inputJson, String webhook, Instant startAt,
                           Duration delay, Integer priority) {
  /** How far ahead a start may be scheduled. */
  private static final Duration LONGEST_DELAY = Duration.ofDays(366);
  /**
   * What a start body may hold; anything else is refused (a misspelt field must not be dropped). debounce,
   * throttle and singleton declare a gate (Gate.of reads them).
   */
  public static final Set<String> FIELDS = Set.of("type", "owner", "externalId", "metadata", "input",
      "webhook", "startAt", "delay", "priority", "debounce", "throttle", "singleton");
  /** Pipeline names, as in pipeline files. */
  private static final NameForm TYPE = new NameForm(64, "_.-");
  /** No ':' in an owner: it ends the owner in the key externalId:<owner>:<externalId>, so owners cannot collide. */
  public static final NameForm OWNER = new NameForm(128, "_.@-");

  public StartRequest(String type, String owner, String externalId, JsonObject metadata, JsonObject input) {
    this(type, owner, externalId, metadata, input, metadata.encode(), input.encode(), null, null, null, null);
  }

  /** The same request with a webhook URL. */
  public StartRequest withWebhook(String url) {
    return new StartRequest(type, owner, externalId, metadata, input, metadataJson, inputJson, url, startAt, delay,
        priority);
  }

  /** When it should start (ms), given now; 0 to start at once (no delay asked for, or a time already past). */
  public long startAtMillis(long now) {
    long at = startAt != null ? startAt.toEpochMilli() : delay != null ? now + delay.toMillis() : 0;
    return at > now ? at : 0;
  }

  /** Reads a start request from JSON, refusing what cannot be started with the field at fault. */
  public static StartRequest fromJson(JsonObject body, Limits limits) {
    if (body == null) {
      throw TxException.invalid("body", "expected a JSON object");
    }
    Strict.fields(body, FIELDS);
    String type = requiredName(body, "type", TYPE, "a pipeline name of letters, digits, '_', '.' or '-' (at most 64)");
    String owner = requiredName(body, "owner", OWNER, "a name of letters, digits, '_', '.', '@' or '-' (at most 128)");
    String externalId = optionalText(body, "externalId", 256);
    JsonObject metadata = object(body, "metadata");
    JsonObject input = object(body, "input");
    String webhook = optionalText(body, "webhook", 2048);
    if (webhook != null) {
      WebhookUrl.check(webhook);
    }
    Instant startAt = startAt(body);
    Duration delay = delay(body);
    if (startAt != null && delay != null) {
      throw TxException.invalid("delay", "give startAt or delay, not both");
    }
    Object priority = body.getValue("priority");
    if (priority != null && (!(priority instanceof Integer level) || level < 0 || level > 9)) {
      throw TxException.invalid("priority", "expected a whole number from 0 (default) to 9 (first), got " + priority);
    }
    return new StartRequest(type, owner, externalId, metadata, input, encode(metadata, "metadata",
        limits.maxMetadataBytes()), encode(input, "input", limits.maxInputBytes()), webhook, startAt, delay,
        (Integer) priority);
  }

  private static Instant startAt(JsonObject body) {
    Object v = body.getValue("startAt");
    if (v == null) {
      return null;
    }
    try {
      return Instant.parse(v instanceof String s ? s : "");
    } catch (DateTimeParseException e) {
      throw TxException.invalid("startAt", "expected an ISO-8601 time such as 2026-11-24T07:00:00Z, got " + v);
    }
  }

  private static Duration delay(JsonObject body) {
    Object v = body.getValue("delay");
    if (v == null) {
      return null;
    }
    try {
      return Durations.read("delay", v, LONGEST_DELAY);
    } catch (IllegalArgumentException e) {
      throw new TxException(TxException.Kind.INVALID_INPUT, e.getMessage(), "delay", null);
    }
  }

  /** Size limits of metadata and input, in bytes of their JSON text. */
  public record Limits(int maxMetadataBytes, int maxInputBytes) {
  }

  private static String requiredName(JsonObject body, String field, NameForm form, String expected) {
    Object v = body.getValue(field);
    if (v == null) {
      throw TxException.invalid(field, "is required");
    }
    if (v instanceof String s) {
      Identifiers.check(field, s);
    }
    if (!(v instanceof String s) || !form.matches(s)) {
      throw TxException.invalid(field, "expected " + expected);
    }
    return s;
  }

  private static String optionalText(JsonObject body, String field, int max) {
    Object v = body.getValue(field);
    if (v == null) {
      return null;
    }
    if (!(v instanceof String s) || s.isEmpty() || s.length() > max) {
      throw TxException.invalid(field, "expected a non-empty string of at most " + max + " characters");
    }
    Identifiers.check(field, s);
    return s;
  }

  private static JsonObject object(JsonObject body, String field) {
    Object v = body.getValue(field);
    if (v == null) {
      return new JsonObject();
    }
    if (!(v instanceof JsonObject o)) {
      throw TxException.invalid(field, "expected a JSON object");
    }
    if (o.containsKey("$sealed")) {
      // the form encryption at rest stores a sealed object in: a client's own would be taken for one on reads
      throw TxException.invalid(field + ".$sealed", "a field name of your own: $sealed is reserved for encryption "
          + "at rest");
    }
    return o;
  }

  /** The JSON text, checked against its limit in UTF-8 bytes (a character is at most 3 bytes in a Java char). */
  private static String encode(JsonObject o, String field, int maxBytes) {
    String text = o.encode();
    if (text.length() * 3L > maxBytes) {
      int size = text.getBytes(StandardCharsets.UTF_8).length;
      if (size > maxBytes) {
        throw TxException.tooLarge(field, size, maxBytes);
      }
    }
    return text;
  }
}
