package io.conveyor.webhook;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Standard Webhooks signatures: v1,<base64 of HMAC-SHA256 over "id.timestamp.body">, keyed by the bytes of a
 * whsec_<base64> secret.
 */
public final class Signer {
  private final SecretKeySpec key;

  public Signer(String secret) {
    if (!secret.startsWith("whsec_")) {
      throw new IllegalArgumentException("a webhook secret starts with whsec_");
    }
    this.key = new SecretKeySpec(Base64.getDecoder().decode(secret.substring(6)), "HmacSHA256");
  }

  /** The value of the webhook-signature header. */
  public String sign(String id, long timestampSeconds, String body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      byte[] sig = mac.doFinal((id + "." + timestampSeconds + "." + body).getBytes(StandardCharsets.UTF_8));
      return "v1," + Base64.getEncoder().encodeToString(sig);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
