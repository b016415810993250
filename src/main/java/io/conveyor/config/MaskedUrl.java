package io.conveyor.config;

/** A URL as logs and messages show it: its password, if any, as ***. */
public final class MaskedUrl {
  private MaskedUrl() {
  }

  /** redis://:secret@host:6379/0 as redis://:***@host:6379/0; a URL without a password unchanged. */
  public static String of(String url) {
    if (url == null) {
      return null;
    }
    int scheme = url.indexOf("://");
    if (scheme < 0) {
      return url;
    }
    int start = scheme + 3;
    int slash = url.indexOf('/', start);
    int end = slash < 0 ? url.length() : slash;
    int at = url.lastIndexOf('@', end - 1);
    int colon = url.indexOf(':', start);
    if (at < start || colon < 0 || colon > at) {
      return url;
    }
    return url.substring(0, colon + 1) + "***" + url.substring(at);
  }
}
