package io.conveyor;

/** Checks of option values that picocli's types do not make (a bounded whole number). */
final class CliArgs {
  private CliArgs() {
  }

  /** A whole number from 1 to max, or null when not given; anything else is bad usage naming the option. */
  static Integer whole(String v, String name, int max) {
    if (v == null) {
      return null;
    }
    try {
      int n = Integer.parseInt(v);
      if (n >= 1 && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new IllegalArgumentException(name + ": a whole number from 1 to " + max + ", got " + v);
  }
}
