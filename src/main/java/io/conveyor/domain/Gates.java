package io.conveyor.domain;

import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import java.time.Instant;

/** The refusals of a gate at start (lib/gate.lua): what a client is told, naming the key and what to do. */
final class Gates {
  private Gates() {
  }

  /** A throttle that refuses: its key had its limit of starts in the period; a slot frees at (ms). */
  static TxException throttled(String key, String at, long now) {
    long free = Long.parseLong(at);
    return TxException.throttled("throttle: key " + key + " has had its limit of starts in the period; the next "
        + "slot frees at " + Instant.ofEpochMilli(free) + " (retry then, or give onLimit: queue to be started then)",
        (int) Math.ceil(Math.max(0, free - now) / 1000.0));
  }

  /** A singleton that refuses: its key has a live transaction. */
  static TxException busy(String key, String live) {
    return new TxException(Kind.GATE_BUSY, "singleton: key " + key + " has a live transaction, " + live
        + "; retry once it has ended, or give onBusy: queue to start after it", "singleton", live);
  }
}
