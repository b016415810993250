package io.conveyor.model;

/**
 * A completion as the notify channel carries it: completed:<txId>:<status>:<owner>. An owner never
 * contains ':' (see StartRequest), so the text splits without doubt.
 */
public record Completion(String txId, String status, String owner) {
  private static final String PREFIX = "completed:";

  /** The completion in a notify message, or null when the message is something else. */
  public static Completion parse(String text) {
    if (text == null || !text.startsWith(PREFIX)) {
      return null;
    }
    String[] parts = text.substring(PREFIX.length()).split(":", 3);
    return parts.length == 3 ? new Completion(parts[0], parts[1], parts[2]) : null;
  }
}
