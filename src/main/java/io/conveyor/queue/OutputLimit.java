package io.conveyor.queue;

import io.conveyor.model.JsonWalk;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * A step's output against its owner's maxPayloadBytes (its own, set through the admin API, else
 * limits.maxPayloadBytes): an output over it would be written to Redis with every checkpoint, archived and sent
 * to webhooks, so the step fails output-too-large instead. Owners' own limits are read at most once per 10 s per
 * owner. Used by one runner, on its context only (a plain map).
 */
final class OutputLimit {
  private static final long FRESH_MS = 10_000;
  private final int defaultMax;
  private final Function<String, Future<Integer>> ownMax;
  private final Clock clock;
  /** owner → {its limit, when it was read (ms)}. */
  private final Map<String, long[]> known = new HashMap<>();

  /** ownMax answers an owner's own limit, or null when it has none. */
  OutputLimit(int defaultMax, Function<String, Future<Integer>> ownMax, Clock clock) {
    this.defaultMax = defaultMax;
    this.ownMax = ownMax;
    this.clock = clock;
  }

  /** Null when the output may be kept; else why not (its size and the limit, and what to do). */
  Future<String> refusal(String owner, JsonObject output, String step) {
    if (output == null) {
      return Future.succeededFuture(null);
    }
    return limitOf(owner).map(max -> {
      if (JsonWalk.utf8Bound(output, max) <= max) {
        return null; // its encoding's upper bound fits: no need to encode it here (completion and checkpoint do)
      }
      int size = output.encode().getBytes(StandardCharsets.UTF_8).length;
      return size <= max ? null : step + " gave an output of " + size + " bytes, over maxPayloadBytes = " + max
          + (max == defaultMax ? "" : " (owner " + owner + "'s own)") + "; make the step return less, or ask an "
          + "admin to raise the owner's maxPayloadBytes (PUT /api/v1/admin/owners/" + owner + ")";
    });
  }

  private Future<Integer> limitOf(String owner) {
    if (owner == null) {
      return Future.succeededFuture(defaultMax);
    }
    long now = clock.millis();
    long[] k = known.get(owner);
    if (k != null && now - k[1] < FRESH_MS) {
      return Future.succeededFuture((int) k[0]);
    }
    // Redis not answering must not fail the run: the default holds until the next read
    return ownMax.apply(owner).otherwise((Integer) null).map(own -> {
      int max = own != null ? own : defaultMax;
      known.put(owner, new long[] {max, now});
      return max;
    });
  }
}
