package io.conveyor.model;

/**
 * A name's form: a letter or digit (ASCII), then letters, digits or the characters of extra, max characters in all.
 * Checked by hand, not by a regular expression: a start checks two names, and a Matcher for each was a kilobyte of
 * garbage per start (JFR allocation samples; docs/performance.md, issue 37).
 */
public record NameForm(int max, String extra) {
  public boolean matches(String s) {
    int n = s.length();
    if (n == 0 || n > max || !alnum(s.charAt(0))) {
      return false;
    }
    for (int i = 1; i < n; i++) {
      char c = s.charAt(i);
      if (!alnum(c) && extra.indexOf(c) < 0) {
        return false;
      }
    }
    return true;
  }

  private static boolean alnum(char c) {
    return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9';
  }
}
