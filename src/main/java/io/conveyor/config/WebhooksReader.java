package io.conveyor.config;

import io.vertx.core.json.JsonArray;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The webhooks section: signing secrets (never shown in a message), targets allowed, backoff and lease. */
final class WebhooksReader {
  private WebhooksReader() {
  }

  static Config.Webhooks read(ConfigReader r) {
    String secret = r.text("webhooks.secret", true);
    if (!secret.isEmpty()) {
      checkSecret("webhooks.secret", secret);
    }
    Map<String, String> owners = new HashMap<>();
    Object list = r.raw("webhooks.ownerSecrets");
    if (!(list instanceof JsonArray entries)) {
      throw r.bad("webhooks.ownerSecrets", "a list of owner:whsec_… entries");
    }
    for (Object o : entries) {
      String e = String.valueOf(o);
      int colon = e.indexOf(':');
      if (colon < 1) {
        throw r.bad("webhooks.ownerSecrets", "entries of the form owner:whsec_…");
      }
      checkSecret("webhooks.ownerSecrets", e.substring(colon + 1));
      owners.put(e.substring(0, colon), e.substring(colon + 1));
    }
    List<String> hosts = new ArrayList<>();
    Object allow = r.raw("webhooks.allowHosts");
    if (!(allow instanceof JsonArray a)) {
      throw r.bad("webhooks.allowHosts", "a list of host names or addresses");
    }
    a.forEach(h -> hosts.add(String.valueOf(h).toLowerCase(Locale.ROOT)));
    Object factor = r.raw("webhooks.factor");
    double f;
    try {
      f = factor instanceof Number n ? n.doubleValue() : Double.parseDouble(String.valueOf(factor));
    } catch (NumberFormatException e) {
      f = 0;
    }
    if (!(f >= 1 && f <= 100)) {
      throw r.bad("webhooks.factor", "a number from 1 to 100 (how much each retry's delay grows)");
    }
    Duration interval = r.duration("webhooks.interval", Duration.ofMillis(1));
    return new Config.Webhooks(secret, Map.copyOf(owners), r.duration("webhooks.initialDelay",
        Duration.ofMillis(1)), f, r.duration("webhooks.maxDelay", Duration.ofMillis(1)),
        r.integer("webhooks.maxAttempts", 1, 10_000), r.duration("webhooks.timeout", Duration.ofMillis(10)),
        r.integer("webhooks.concurrency", 1, 100_000), r.bool("webhooks.allowPrivateTargets"), List.copyOf(hosts),
        r.integer("webhooks.failureLimit", 1, 1_000_000), r.duration("webhooks.failureWindow", Duration.ofMillis(1)),
        r.duration("webhooks.pause", Duration.ofMillis(1)), interval, r.lease("webhooks.lease", "webhooks.interval"),
        r.duration("webhooks.grace", Duration.ZERO), r.duration("webhooks.pollGrace", Duration.ZERO));
  }

  /** A Standard Webhooks secret: whsec_ and the base64 of at least 16 bytes. */
  private static void checkSecret(String path, String secret) {
    try {
      if (secret.startsWith("whsec_") && Base64.getDecoder().decode(secret.substring(6)).length >= 16) {
        return;
      }
    } catch (IllegalArgumentException e) {
      // falls through to the message
    }
    throw new ConfigException("config key " + path + " (env " + ConfigLoader.envName(path) + "): expected whsec_ "
        + "and the base64 of at least 16 random bytes (the secret itself is not shown)");
  }
}
