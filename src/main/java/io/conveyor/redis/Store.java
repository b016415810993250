package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * What every store is built on: its verticle's context (link, scripts, clock, limits; see StoreContext) and the
 * key names. A store adds only its own operations.
 */
abstract class Store {
  final StoreContext r;
  final Keys keys;
  /** Made at first use, on this store's context (its data keys are cached per store). */
  private io.conveyor.crypto.Payloads payloads;

  Store(StoreContext r) {
    this.r = r;
    this.keys = r.keys();
  }

  /** Seals and opens owners' payloads (crypto.Payloads), reading data keys through this store's context. */
  io.conveyor.crypto.Payloads payloads() {
    if (payloads == null) {
      payloads = r.encryption().payloads(new DataKeyStore(r));
    }
    return payloads;
  }

  /**
   * Copies each member of a set of names (the owners or pipelines known) into every partition with copy; nothing
   * to do with one partition.
   */
  Future<Void> copyEach(String namesS, Function<String, Future<Void>> copy) {
    if (keys.partitions() == 1) {
      return Future.succeededFuture();
    }
    return r.send(Request.cmd(Command.SMEMBERS).arg(namesS)).compose(names -> {
      List<Future<Void>> each = new ArrayList<>();
      names.forEach(n -> each.add(copy.apply(n.toString())));
      return Future.all(each).mapEmpty();
    });
  }
}
