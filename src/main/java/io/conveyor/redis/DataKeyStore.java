package io.conveyor.redis;

import io.conveyor.crypto.KeyRecords;
import io.vertx.core.Future;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.util.List;

/**
 * Owners' data keys, wrapped under a master key, in one cluster-wide hash (dataKeysH): k:<owner> the key the owner's
 * payloads are sealed with now, v:<owner> the last version it had. Clear data keys never reach Redis
 * (crypto.DataKeys wraps and unwraps them on the node).
 */
public final class DataKeyStore extends Store implements KeyRecords {
  public DataKeyStore(StoreContext r) {
    super(r);
  }

  /** The cluster-wide hash of wrapped data keys. */
  public String dataKeysH() {
    return keys.global("dataKeysH");
  }

  @Override
  public Object scope() {
    return r.link();
  }

  /**
   * Crypto-shredding: deletes the owner's wrapped key, keeping its last version (a new key takes the next one);
   * true when there was one. Nodes drop their cached copies when told (Encryption.SHREDDED) or after cacheTtl.
   */
  public Future<Boolean> shred(String owner) {
    return r.send(Request.cmd(Command.HDEL).arg(dataKeysH()).arg("k:" + owner)).map(n -> n.toInteger() == 1);
  }

  @Override
  public Future<Current> current(String owner) {
    return r.send(Request.cmd(Command.HMGET).arg(dataKeysH()).arg("v:" + owner).arg("k:" + owner))
        .map(f -> new Current(f.get(0) == null ? 0 : f.get(0).toInteger(),
            f.get(1) == null ? null : Wrapped.parse(f.get(1).toString())));
  }

  /** data-key-put.lua: the first node to make an owner's key wins. */
  @Override
  public Future<Current> put(String owner, int version, String masterId, String base64) {
    return r.run(r.scripts().dataKeyPut, List.of(dataKeysH()),
        List.of(owner, Integer.toString(version), masterId + ":" + base64)).map(DataKeyStore::current);
  }

  @Override
  public Future<java.util.Map<String, Wrapped>> all() {
    return r.send(Request.cmd(Command.HGETALL).arg(dataKeysH())).map(reply -> {
      java.util.Map<String, Wrapped> out = new java.util.TreeMap<>();
      Replies.hash(reply, (k, v) -> {
        if (k.startsWith("k:")) {
          out.put(k.substring(2), Wrapped.parse(v.toString()));
        }
      });
      return out;
    });
  }

  /** data-key-rewrap.lua: a compare and a write in one step, so a re-wrap never brings back a shredded key. */
  @Override
  public Future<Boolean> replace(String owner, Wrapped from, Wrapped to) {
    return r.run(r.scripts().dataKeyRewrap, List.of(dataKeysH()), List.of(owner, from.record(), to.record()))
        .map(n -> n.toInteger() == 1);
  }

  private static Current current(Response reply) {
    String record = reply.get(1).toString();
    return new Current(reply.get(0).toInteger(), record.isEmpty() ? null : Wrapped.parse(record));
  }
}
