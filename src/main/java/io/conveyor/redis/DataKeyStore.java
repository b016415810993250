package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.util.List;

/**
 * Owners' data keys, wrapped under a master key, in one cluster-wide hash (dataKeysH): the key the owner's payloads
 * are sealed with now, and the last version it had, which outlives a shred so a new key never takes an old
 * version. Clear data keys never reach Redis (crypto.DataKeys wraps and unwraps them on the node).
 */
public final class DataKeyStore extends Store {
  /** A wrapped data key as stored: its version, the id of the master key it is wrapped under, the bytes (base64). */
  public record Wrapped(int version, String masterId, String base64) {
    static Wrapped parse(String record) {
      String[] p = record.split(":", 3);
      return new Wrapped(Integer.parseInt(p[0]), p[1], p[2]);
    }
  }

  /** The owner's key now (null: none, never made or shredded) and its last version (0: never had one). */
  public record Current(int lastVersion, Wrapped key) {
  }

  public DataKeyStore(StoreContext r) {
    super(r);
  }

  /** The cluster-wide hash of wrapped data keys. */
  public String dataKeysH() {
    return keys.global("dataKeysH");
  }

  /** The owner's wrapped key now, and its last version. */
  public Future<Current> current(String owner) {
    return r.send(Request.cmd(Command.HMGET).arg(dataKeysH()).arg("v:" + owner).arg("k:" + owner))
        .map(f -> new Current(f.get(0) == null ? 0 : f.get(0).toInteger(),
            f.get(1) == null ? null : Wrapped.parse(f.get(1).toString())));
  }

  /**
   * Stores a new key for the owner at version (its last version + 1), unless it has one (data-key-put.lua): answers
   * the key the owner has then, the caller's or another node's, or none when its last version moved (a shred).
   */
  public Future<Current> put(String owner, int version, String masterId, String base64) {
    return r.run(r.scripts().dataKeyPut, List.of(dataKeysH()),
        List.of(owner, Integer.toString(version), masterId + ":" + base64)).map(DataKeyStore::current);
  }

  private static Current current(Response reply) {
    String record = reply.get(1).toString();
    return new Current(reply.get(0).toInteger(), record.isEmpty() ? null : Wrapped.parse(record));
  }
}
