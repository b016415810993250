package io.conveyor.model;

/**
 * The one check every identifier passes at every way in (HTTP, the event bus, the command line, pipeline and
 * schedule files): no control character (C0, DEL, C1) and no unpaired surrogate. Such text breaks logs, keys and
 * terminals, and an unpaired surrogate has no UTF-8 form at all. Letters of any script are fine; the forms of
 * particular names (pipeline, owner, …) are checked after this by their own patterns.
 */
public final class Identifiers {
  private Identifiers() {
  }

  /** Null when the text is clean; else what is wrong with it and where, as a refusal says it. */
  public static String problem(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
        return String.format("contains the control character U+%04X at index %d; remove it", (int) c, i);
      }
      if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return String.format("contains the unpaired surrogate U+%04X at index %d; send valid Unicode text", (int) c,
            i);
      }
    }
    return null;
  }

  /** Refuses (invalid-input, naming the field) an identifier that is not clean; null passes. */
  public static void check(String field, String text) {
    String problem = text == null ? null : problem(text);
    if (problem != null) {
      throw TxException.invalid(field, problem);
    }
  }
}
