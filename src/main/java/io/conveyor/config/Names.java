package io.conveyor.config;

import io.conveyor.model.Strict;
import java.util.Collection;

/** The nearest of known names to a misspelt one, for refusals that say what was probably meant (Strict's rule). */
public final class Names {
  private Names() {
  }

  /** " (did you mean x?)" for the nearest known name within a few edits, else "". */
  public static String suggestion(String given, Collection<String> known) {
    return Strict.suggestion(given, known);
  }
}
