package io.conveyor;

import java.util.List;

/** How every command reads its arguments: a positional one by index, an option by name. */
final class CliArgs {
  private CliArgs() {
  }

  /** The positional argument at i; a missing one (or an option in its place) is bad usage naming it. */
  static String arg(List<String> args, int i, String name) {
    if (i >= args.size() || args.get(i).startsWith("--")) {
      throw new IllegalArgumentException("missing " + name);
    }
    return args.get(i);
  }

  /** The value after the option name, or the fallback when the option is not given. */
  static String option(List<String> args, String name, String fallback) {
    int i = args.indexOf(name);
    if (i < 0) {
      return fallback;
    }
    if (i + 1 >= args.size()) {
      throw new IllegalArgumentException(name + " needs a value");
    }
    return args.get(i + 1);
  }

  /** A whole number from 1 to max, or null when not given. */
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
