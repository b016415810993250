package io.conveyor.crypto;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * Master key rotation: every owner's data key wrapped under another master key than the current one is unwrapped
 * (the old master key must be among security.encryption.previousMasterKeys) and wrapped again under the current
 * one, in place. The data keys themselves do not change, so no payload is touched; once none is left under the old
 * master key, it can be dropped from the config.
 */
public final class Rewrap {
  private Rewrap() {
  }

  /** {masterKey, rewrapped, current, changed, failed: [{owner, reason}]}; changed: shredded or re-wrapped meanwhile. */
  public static Future<JsonObject> run(KeyRecords records, KeyProvider provider) {
    return records.all().compose(all -> {
      List<String> owners = new ArrayList<>(all.keySet());
      List<Future<String>> each = new ArrayList<>(owners.size());
      for (String owner : owners) {
        each.add(one(records, provider, owner, all.get(owner)));
      }
      return Future.join(each).transform(v -> {
        JsonObject out = new JsonObject().put("masterKey", provider.currentId()).put("rewrapped", 0).put("current", 0)
            .put("changed", 0);
        JsonArray failed = new JsonArray();
        for (int i = 0; i < owners.size(); i++) {
          Future<String> f = each.get(i);
          if (f.succeeded()) {
            out.put(f.result(), out.getInteger(f.result()) + 1);
          } else {
            failed.add(new JsonObject().put("owner", owners.get(i)).put("reason", f.cause().getMessage()));
          }
        }
        return Future.succeededFuture(out.put("failed", failed));
      });
    });
  }

  private static Future<String> one(KeyRecords records, KeyProvider provider, String owner, KeyRecords.Wrapped w) {
    if (w.masterId().equals(provider.currentId())) {
      return Future.succeededFuture("current");
    }
    byte[] aad = DataKeys.aad(owner, w.version());
    return provider.unwrap(new KeyProvider.Wrapped(w.masterId(), Base64.getDecoder().decode(w.base64())), aad)
        .compose(clear -> provider.wrap(clear, aad))
        .compose(n -> records.replace(owner, w, new KeyRecords.Wrapped(w.version(), n.masterId(),
            Base64.getEncoder().encodeToString(n.bytes()))))
        .map(replaced -> replaced ? "rewrapped" : "changed");
  }
}
