package io.conveyor.model;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as written in config and pipeline files: a whole number and a unit, e.g. 500ms, 60s, 5m, 6h, 1d. */
public final class Durations {
  public static final String FORM = "a whole number with a unit: ms, s, m, h or d (e.g. 500ms, 60s, 6h)";
  private static final Pattern SHAPE = Pattern.compile("(\\d{1,12})\\s*(ms|s|m|h|d)");

  private Durations() {
  }

  /** Parses a duration, or throws IllegalArgumentException saying what form is expected. */
  public static Duration parse(String text) {
    Matcher m = SHAPE.matcher(text == null ? "" : text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("expected " + FORM + ", got '" + text + "'");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }

  /**
   * A field's value as JSON holds it, read as a duration; otherwise IllegalArgumentException naming the field and
   * the form expected (a value that is not text is refused as parse refuses an empty one).
   */
  public static Duration read(String field, Object value) {
    try {
      return parse(value instanceof String s ? s : null);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(field + ": " + e.getMessage());
    }
  }

  /** The same, and at most max: longer is refused with the limit and the value given. */
  public static Duration read(String field, Object value, Duration max) {
    Duration d = read(field, value);
    if (d.compareTo(max) > 0) {
      throw new IllegalArgumentException(field + ": at most " + format(max) + ", got " + value);
    }
    return d;
  }

  /** The shortest exact text for a duration, the inverse of {@link #parse}. */
  public static String format(Duration d) {
    long ms = d.toMillis();
    long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1_000L};
    String[] units = {"d", "h", "m", "s"};
    for (int i = 0; i < sizes.length; i++) {
      if (ms != 0 && ms % sizes[i] == 0) {
        return ms / sizes[i] + units[i];
      }
    }
    return ms + "ms";
  }
}
