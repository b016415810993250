package io.conveyor.model;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/** The form of a webhook URL, checked before anything else: http or https, a host, no credentials. */
public final class WebhookUrl {
  private WebhookUrl() {
  }

  /** The URL parsed, or a refusal naming the field webhook. */
  public static URI check(String url) {
    URI u;
    try {
      u = new URI(url);
    } catch (URISyntaxException e) {
      throw TxException.invalid("webhook", "not a URL (" + e.getReason() + ")");
    }
    String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw TxException.invalid("webhook", "expected an http or https URL");
    }
    if (u.getHost() == null || u.getHost().isEmpty()) {
      throw TxException.invalid("webhook", "expected a URL with a host");
    }
    if (u.getRawUserInfo() != null) {
      throw TxException.invalid("webhook", "credentials in the URL are not allowed");
    }
    if (u.getRawFragment() != null) {
      throw TxException.invalid("webhook", "a fragment (#…) is not allowed");
    }
    return u;
  }

  /** The first 16 hex digits of SHA-256 of the URL: the key of its failure counter and pause. */
  public static String hash(String url) {
    try {
      byte[] d = java.security.MessageDigest.getInstance("SHA-256")
          .digest(url.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return java.util.HexFormat.of().formatHex(d, 0, 8);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
