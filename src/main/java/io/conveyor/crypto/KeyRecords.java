package io.conveyor.crypto;

import io.vertx.core.Future;

/**
 * Where owners' wrapped data keys are kept, shared by every node (redis.DataKeyStore): the key an owner seals with
 * now and the last version it had, which outlives a shred so a new key never takes an old version.
 */
public interface KeyRecords {
  /** A wrapped data key as stored: its version, the id of the master key it is wrapped under, the bytes (base64). */
  record Wrapped(int version, String masterId, String base64) {
    /** From its stored form, version:masterId:base64. */
    public static Wrapped parse(String record) {
      String[] p = record.split(":", 3);
      return new Wrapped(Integer.parseInt(p[0]), p[1], p[2]);
    }

    /** Its stored form. */
    public String record() {
      return version + ":" + masterId + ":" + base64;
    }
  }

  /** The owner's key now (null: none, never made or shredded) and its last version (0: never had one). */
  record Current(int lastVersion, Wrapped key) {
  }

  /** What these records are read through (a node's Redis link): data keys are cached per scope and context. */
  default Object scope() {
    return this;
  }

  /** The owner's wrapped key now, and its last version. */
  Future<Current> current(String owner);

  /**
   * Stores a new key for the owner at version (its last version + 1) unless it has one; answers the key the owner
   * has then (the caller's, or another node's made first), or none when its last version moved (a shred came between).
   */
  Future<Current> put(String owner, int version, String masterId, String base64);

  /** Every owner's wrapped key now (owners whose key was shredded are not among them). */
  Future<java.util.Map<String, Wrapped>> all();

  /** Puts to in place of from, unless the owner's key is no longer from; true when replaced. */
  Future<Boolean> replace(String owner, Wrapped from, Wrapped to);
}
