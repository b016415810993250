package io.conveyor.model;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/** A validated request to start a transaction; metadata and input are kept as the JSON text Redis stores. */
public record StartRequest(String type, String owner, String externalId, JsonObject metadata, JsonObject input,
                           String metadataJson, String inputJson, String webhook) {
  /** Pipeline names, as in pipeline files. */
  private static final Pattern TYPE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
  /** No ':' in an owner: it ends the owner in the key externalId:<owner>:<externalId>, so owners cannot collide. */
  private static final Pattern OWNER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}");

  public StartRequest(String type, String owner, String externalId, JsonObject metadata, JsonObject input) {
    this(type, owner, externalId, metadata, input, metadata.encode(), input.encode(), null);
  }

  /** The same request with a webhook URL. */
  public StartRequest withWebhook(String url) {
    return new StartRequest(type, owner, externalId, metadata, input, metadataJson, inputJson, url);
  }

  /** Reads a start request from JSON, refusing what cannot be started with the field at fault. */
  public static StartRequest fromJson(JsonObject body, Limits limits) {
    if (body == null) {
      throw TxException.invalid("body", "expected a JSON object");
    }
    String type = requiredName(body, "type", TYPE, "a pipeline name of letters, digits, '_', '.' or '-' (at most 64)");
    String owner = requiredName(body, "owner", OWNER, "a name of letters, digits, '_', '.', '@' or '-' (at most 128)");
    String externalId = optionalText(body, "externalId", 256);
    JsonObject metadata = object(body, "metadata");
    JsonObject input = object(body, "input");
    String webhook = optionalText(body, "webhook", 2048);
    if (webhook != null) {
      WebhookUrl.check(webhook);
    }
    return new StartRequest(type, owner, externalId, metadata, input, encode(metadata, "metadata",
        limits.maxMetadataBytes()), encode(input, "input", limits.maxInputBytes()), webhook);
  }

  /** Size limits of metadata and input, in bytes of their JSON text. */
  public record Limits(int maxMetadataBytes, int maxInputBytes) {
  }

  private static String requiredName(JsonObject body, String field, Pattern form, String expected) {
    Object v = body.getValue(field);
    if (v == null) {
      throw TxException.invalid(field, "is required");
    }
    if (!(v instanceof String s) || !form.matcher(s).matches()) {
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
