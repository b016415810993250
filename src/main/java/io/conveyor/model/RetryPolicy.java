package io.conveyor.model;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * How often and how soon a failed step runs again. Attempt n (from 1) that fails waits
 * min(initialInterval × backoffCoefficient^(n-1), maxInterval) before attempt n+1; with jitter, up to a fifth
 * more (never less, so the interval is a floor a service can count on). A failure whose code is listed in
 * nonRetryable, or the last of maxAttempts, ends the transaction.
 */
public record RetryPolicy(int maxAttempts, Duration initialInterval, double backoffCoefficient, Duration maxInterval,
                          boolean jitter, List<String> nonRetryable) {
  /** No retry: the first failure ends the transaction (a step and pipeline without a policy). */
  public static final RetryPolicy NONE = new RetryPolicy(1, Duration.ofSeconds(1), 2, Duration.ofSeconds(100),
      false, List.of());
  private static final Set<String> FIELDS = Set.of("maxAttempts", "initialInterval", "backoffCoefficient",
      "maxInterval", "jitter", "nonRetryable");
  private static final Duration LONGEST = Duration.ofDays(7);

  /**
   * A policy from its JSON form, defaults filled in: 3 attempts, 1s doubling, at most 100 × the initial
   * interval, jitter on. Throws IllegalArgumentException naming the field and the expected form.
   */
  public static RetryPolicy parse(Object raw) {
    if (!(raw instanceof JsonObject j)) {
      throw new IllegalArgumentException("expected an object with " + String.join(", ", new TreeSet<>(FIELDS)));
    }
    for (String f : j.fieldNames()) {
      if (!FIELDS.contains(f)) {
        throw new IllegalArgumentException("unknown field '" + f + "' (expected " + String.join(", ",
            new TreeSet<>(FIELDS)) + ")");
      }
    }
    Object max = j.getValue("maxAttempts", 3);
    if (!(max instanceof Integer m) || m < 1 || m > 1000) {
      throw new IllegalArgumentException("maxAttempts: expected a whole number from 1 to 1000, got " + max);
    }
    Duration initial = duration(j, "initialInterval", Duration.ofSeconds(1));
    Object coefficient = j.getValue("backoffCoefficient", 2);
    if (!(coefficient instanceof Number c) || c.doubleValue() < 1 || c.doubleValue() > 100) {
      throw new IllegalArgumentException("backoffCoefficient: expected a number from 1 to 100, got " + coefficient);
    }
    Duration longest = duration(j, "maxInterval", initial.multipliedBy(100).compareTo(LONGEST) > 0 ? LONGEST
        : initial.multipliedBy(100));
    if (longest.compareTo(initial) < 0) {
      throw new IllegalArgumentException("maxInterval: must not be shorter than initialInterval ("
          + Durations.format(initial) + ")");
    }
    Object jitter = j.getValue("jitter", true);
    if (!(jitter instanceof Boolean b)) {
      throw new IllegalArgumentException("jitter: expected true or false");
    }
    return new RetryPolicy(m, initial, c.doubleValue(), longest, b, codes(j.getValue("nonRetryable")));
  }

  private static Duration duration(JsonObject j, String field, Duration fallback) {
    Object v = j.getValue(field);
    if (v == null) {
      return fallback;
    }
    Duration d = Durations.read(field, v);
    if (d.isZero() || d.compareTo(LONGEST) > 0) {
      throw new IllegalArgumentException(field + ": expected more than 0ms and at most 7d, got " + v);
    }
    return d;
  }

  private static List<String> codes(Object raw) {
    if (raw == null) {
      return List.of();
    }
    if (!(raw instanceof JsonArray a)) {
      throw new IllegalArgumentException("nonRetryable: expected a list of error codes");
    }
    List<String> out = new ArrayList<>();
    for (Object c : a) {
      if (!(c instanceof String s) || !s.matches("[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")) {
        throw new IllegalArgumentException("nonRetryable: expected error codes of letters, digits, '_', '.', ':' or "
            + "'-', got " + c);
      }
      out.add(s);
    }
    return List.copyOf(out);
  }

  /** The policy in a fixed field order, every default written out: part of the pipeline's version. */
  public JsonObject toJson() {
    return new JsonObject().put("maxAttempts", maxAttempts).put("initialInterval", Durations.format(initialInterval))
        .put("backoffCoefficient", backoffCoefficient).put("maxInterval", Durations.format(maxInterval))
        .put("jitter", jitter).put("nonRetryable", new JsonArray(nonRetryable));
  }

  /** Whether a failure with this code, in this attempt (from 1), is followed by another attempt. */
  public boolean retries(String code, int attempt) {
    return attempt < maxAttempts && !nonRetryable.contains(code);
  }

  /** The wait after attempt n (from 1) failed; random is a draw from [0, 1), used only with jitter. */
  public Duration delayAfter(int attempt, double random) {
    double ms = initialInterval.toMillis() * Math.pow(backoffCoefficient, Math.max(0, attempt - 1));
    long base = (long) Math.min(ms, maxInterval.toMillis());
    return Duration.ofMillis(jitter ? base + (long) (base * 0.2 * random) : base);
  }
}
