package io.conveyor.model;

/**
 * A completion as the notify channel carries it: completed:<txId>:<status>:<owner>, a line of its own; one
 * message carries all the completions of a complete call, one per line. An owner never contains ':' or a line
 * break (see StartRequest), so the text splits without doubt.
 */
public record Completion(String txId, String status, String owner) {
  private static final String PREFIX = "completed:";

  /**
   * Each completion in a notify message, in order (none when the message is something else: a cancel:, a
   * webhook:, a probe).
   */
  public static void each(String text, java.util.function.Consumer<Completion> to) {
    if (text == null || !text.startsWith(PREFIX)) {
      return;
    }
    int from = 0;
    while (from < text.length()) {
      int end = text.indexOf('\n', from);
      Completion c = parse(text.substring(from, end < 0 ? text.length() : end));
      if (c != null) {
        to.accept(c);
      }
      from = end < 0 ? text.length() : end + 1;
    }
  }

  /** The completion in one line of a notify message, or null when the line is something else. */
  public static Completion parse(String text) {
    if (text == null || !text.startsWith(PREFIX)) {
      return null;
    }
    String[] parts = text.substring(PREFIX.length()).split(":", 3);
    return parts.length == 3 ? new Completion(parts[0], parts[1], parts[2]) : null;
  }
}
