package io.conveyor.api;

import io.conveyor.bus.Addresses;
import io.conveyor.crypto.KeyProvider;
import io.conveyor.crypto.Rewrap;
import io.conveyor.model.Identifiers;
import io.conveyor.model.TxException;
import io.conveyor.redis.DataKeyStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

/**
 * Crypto-shredding (DELETE /api/v1/admin/owners/{owner}/data-key): the owner's wrapped data key is deleted from
 * Redis, the one place it is kept, and every node is told to drop its cached copy, so everything sealed under it, in
 * Redis, the archive and their backups, stays sealed for good. The owner's next seal makes a new key. And master
 * key rotation: every data key re-wrapped under the current master key.
 */
final class DataKeyAdmin {
  private final Vertx vertx;
  private final DataKeyStore store;
  private final KeyProvider provider;

  /** provider: the node's master keys, or null when it has none (security.encryption.masterKey). */
  DataKeyAdmin(Vertx vertx, DataKeyStore store, KeyProvider provider) {
    this.vertx = vertx;
    this.store = store;
    this.provider = provider;
  }

  /** Master key rotation (POST /api/v1/admin/data-keys/rewrap): see crypto.Rewrap. */
  Future<JsonObject> rewrap() {
    if (provider == null) {
      return Future.failedFuture(TxException.invalid("masterKey", "no master key on this node: set "
          + "security.encryption.masterKey (the new one) and previousMasterKeys (the old ones), then call again"));
    }
    return Rewrap.run(store, provider);
  }

  /** {owner, shredded}: shredded false when the owner had no data key (never sealed, or shredded already). */
  Future<JsonObject> shred(String owner) {
    String problem = owner.isEmpty() ? "empty" : Identifiers.problem(owner);
    if (problem != null) {
      return Future.failedFuture(TxException.invalid("owner", problem));
    }
    return store.shred(owner).map(had -> {
      // told even when nothing was deleted here: a node may still cache a key another shred deleted
      vertx.eventBus().publish(Addresses.DATA_KEY_SHREDDED, owner);
      return new JsonObject().put("owner", owner).put("shredded", had);
    });
  }
}
