package io.conveyor.crypto;

import io.vertx.core.Future;

/**
 * Wraps and unwraps owners' data keys under a master key that never leaves it. The master key may come from
 * config, a file or an environment variable (LocalKeyProvider); a KMS is one more implementation, whose wrap and
 * unwrap are calls to it. Every wrapped key names the master key it was wrapped under, so data keys wrapped under
 * an older master key still open while they are re-wrapped (rotation).
 */
public interface KeyProvider {
  /** A data key wrapped under a master key: that key's id and the wrapped bytes. */
  record Wrapped(String masterId, byte[] bytes) {
  }

  /** The id of the master key new data keys are wrapped under. */
  String currentId();

  /** Wraps a data key under the current master key, bound to aad (the owner and the key's version). */
  Future<Wrapped> wrap(byte[] dataKey, byte[] aad);

  /** Unwraps a data key; fails with SealedException when its master key is unknown or the bytes do not open. */
  Future<byte[]> unwrap(Wrapped wrapped, byte[] aad);
}
