package io.conveyor.webhook;

import io.conveyor.config.Config;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.ZonedDateTime;
import java.util.concurrent.ThreadLocalRandom;

/** When a failed delivery goes again: exponential backoff with jitter, or the receiver's Retry-After. */
final class Backoff {
  private final Config.Webhooks settings;

  Backoff(Config.Webhooks settings) {
    this.settings = settings;
  }

  /** initialDelay × factor^(attempt-1), capped at maxDelay, then up to a fifth less at random. */
  long delayFor(int attempt) {
    double d = settings.initialDelay().toMillis() * Math.pow(settings.factor(), attempt - 1);
    long capped = (long) Math.min(d, settings.maxDelay().toMillis());
    return capped - (long) (capped * 0.2 * ThreadLocalRandom.current().nextDouble());
  }

  /** Retry-After as seconds or an HTTP date, in ms from now; null when absent or unreadable. */
  static Long retryAfterMillis(String header, long now) {
    if (header == null || header.isBlank()) {
      return null;
    }
    try {
      return Math.max(0, Long.parseLong(header.trim())) * 1000;
    } catch (NumberFormatException e) {
      try {
        return Math.max(0, ZonedDateTime.parse(header.trim(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant()
            .toEpochMilli() - now);
      } catch (DateTimeParseException e2) {
        return null;
      }
    }
  }
}
